package engine

import (
	"svcd/engine/schema"
	"svcd/fsm"
)

// CredentialTouch names the principals whose credential or rights a
// committed event may have changed: what holders of long-lived principals
// (open realtime streams) must Recheck.
type CredentialTouch struct {
	// Match reports whether the event may have changed p.
	Match func(p Principal) bool
	// ID, when set, is the only Principal.ID Match can accept, and TokenID
	// the only Principal.TokenID: a holder that indexes its principals
	// need only test those. Both empty: any principal may match.
	ID, TokenID string
}

// CredentialsTouched classifies a committed event (as observers see it,
// after the engine's caches were rebuilt): nil when it changes no
// credential.
//
//   - revoked (logout, refresh, a revoked session): the token of that jti;
//   - admins (an admin created, updated or deleted, force-logout-all): that
//     admin's principals (sessions and API tokens) and the impersonation
//     sessions it started; every admin and impersonation when the event
//     names no admin;
//   - api_tokens: that API token; every API token when none is named (an
//     admin's were deleted with it);
//   - settings: impersonation sessions (auth.impersonation.enabled);
//   - schema, migrate, a restored snapshot: every signed-in principal;
//   - an update or delete of a record of an auth collection: that user's
//     sessions (an update also changes what @request.auth reads).
func (e *Engine) CredentialsTouched(ev fsm.Event) *CredentialTouch {
	switch ev.Kind {
	case evRevoked:
		jti := ev.Subject
		if jti == "" {
			return nil
		}
		return &CredentialTouch{TokenID: jti, Match: func(p Principal) bool { return p.Kind != Anonymous && p.TokenID == jti }}
	case evAdmins:
		id := ev.Subject
		if id == "" {
			return &CredentialTouch{Match: func(p Principal) bool { return p.Kind == AdminPrincipal || impersonation(p) }}
		}
		return &CredentialTouch{Match: func(p Principal) bool {
			return (p.Kind == AdminPrincipal && p.ID == id) || (impersonation(p) && p.Claims.ImpersonatedBy == id)
		}}
	case evAPITokens:
		id := ev.Subject
		if id == "" {
			return &CredentialTouch{Match: apiToken}
		}
		return &CredentialTouch{TokenID: id, Match: func(p Principal) bool { return apiToken(p) && p.TokenID == id }}
	case evSettings:
		return &CredentialTouch{Match: impersonation}
	case evSchema, evMigrate, fsm.KindRestore:
		return &CredentialTouch{Match: func(p Principal) bool { return p.Kind != Anonymous }}
	case EvRecordUpdate, EvRecordDelete:
		ch, ok := ev.Data.(*RecordChange)
		if !ok || len(ch.Row) == 0 {
			return nil
		}
		if ci := e.collection(ch.CollectionID); ci != nil && ci.Type != schema.TypeAuth {
			return nil
		}
		id, _ := ch.Row[0].(string)
		if id == "" {
			return nil
		}
		coll := ch.CollectionName
		return &CredentialTouch{ID: id, Match: func(p Principal) bool { return p.Kind == User && p.ID == id && p.Collection == coll }}
	}
	return nil
}

// impersonation reports whether p is an impersonation session.
func impersonation(p Principal) bool {
	return p.Kind == User && p.Claims != nil && p.Claims.ImpersonatedBy != ""
}

// apiToken reports whether p signed in with an API token.
func apiToken(p Principal) bool { return p.Kind == AdminPrincipal && p.Claims == nil }
