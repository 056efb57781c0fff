package auth

import (
	"svcd/engine"
	"svcd/engine/schema"
	"svcd/fsm"
)

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
func (au *Auth) CredentialsTouched(ev fsm.Event) *engine.CredentialTouch {
	switch ev.Kind {
	case evRevoked:
		jti := ev.Subject
		if jti == "" {
			return nil
		}
		return &engine.CredentialTouch{TokenID: jti, Match: func(p engine.Principal) bool { return p.Kind != engine.Anonymous && p.TokenID == jti }}
	case evAdmins:
		id := ev.Subject
		if id == "" {
			return &engine.CredentialTouch{Match: func(p engine.Principal) bool { return p.Kind == engine.AdminPrincipal || impersonation(p) }}
		}
		return &engine.CredentialTouch{Match: func(p engine.Principal) bool {
			return (p.Kind == engine.AdminPrincipal && p.ID == id) || (impersonation(p) && p.Claims.ImpersonatedBy == id)
		}}
	case evAPITokens:
		id := ev.Subject
		if id == "" {
			return &engine.CredentialTouch{Match: apiToken}
		}
		return &engine.CredentialTouch{TokenID: id, Match: func(p engine.Principal) bool { return apiToken(p) && p.TokenID == id }}
	case engine.EvSettings:
		return &engine.CredentialTouch{Match: impersonation}
	case engine.EvSchema, engine.EvMigrate, fsm.KindRestore:
		return &engine.CredentialTouch{Match: func(p engine.Principal) bool { return p.Kind != engine.Anonymous }}
	case engine.EvRecordUpdate, engine.EvRecordDelete:
		ch, ok := ev.Data.(*engine.RecordChange)
		if !ok || len(ch.Row) == 0 {
			return nil
		}
		if ci := au.core.Coll(ch.CollectionID); ci != nil && ci.Type != schema.TypeAuth {
			return nil
		}
		id, _ := ch.Row[0].(string)
		if id == "" {
			return nil
		}
		coll := ch.CollectionName
		return &engine.CredentialTouch{ID: id, Match: func(p engine.Principal) bool { return p.Kind == engine.User && p.ID == id && p.Collection == coll }}
	}
	return nil
}

// impersonation reports whether p is an impersonation session.
func impersonation(p engine.Principal) bool {
	return p.Kind == engine.User && p.Claims != nil && p.Claims.ImpersonatedBy != ""
}

// apiToken reports whether p signed in with an API token.
func apiToken(p engine.Principal) bool { return p.Kind == engine.AdminPrincipal && p.Claims == nil }
