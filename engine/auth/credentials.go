package auth

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"svcd/engine"
	"svcd/engine/token"
)

// Credentials are checked for as long as they are used: on every request,
// and again for open realtime streams whenever a committed change may have
// ended them (Recheck). A credential holds while its signature, issuer,
// audience and expiry verify, its jti is not revoked, and its account
// holds it:
//
//   - an admin token: the admin exists and issued no force-logout (or
//     password change) at or after the token's iat; the role is read live;
//   - a user token: the account exists and its password was not reset (nor
//     the account created) at or after the token's iat; an impersonation
//     token also needs its admin to exist with a role that may impersonate,
//     no force-logout of that admin since, and impersonation still on;
//   - an API token: it exists, has not expired, and its admin exists (the
//     admin's role and the token's scopes are read live).

// impersonatorRole is the least role that may impersonate (the role table
// of the HTTP layer gates POST /admin/impersonate at it too).
const impersonatorRole = engine.RoleEditor

// Authenticate verifies a bearer token (admin, user or API token) and
// returns the caller.
func (au *Auth) Authenticate(ctx context.Context, raw string) (engine.Principal, error) {
	if strings.HasPrefix(raw, APITokenPrefix) {
		return au.apiTokenPrincipal(au.tokens.Load().byHash[hashAPIToken(raw)])
	}
	c, aud, err := au.signer.VerifyAny(raw, token.AudAdmin, token.AudUser)
	if err != nil {
		return engine.Principal{}, errBadToken
	}
	return au.principalOf(ctx, c, aud)
}

// Recheck decides again whether p's credential holds against the state
// this replica has applied now, and returns the principal as it stands
// (current role, scopes and account fields), keeping p.Request. An
// anonymous principal always holds.
func (au *Auth) Recheck(ctx context.Context, p engine.Principal) (engine.Principal, error) {
	var q engine.Principal
	var err error
	switch {
	case p.Kind == engine.Anonymous:
		return p, nil
	case p.Claims == nil:
		q, err = au.apiTokenPrincipal(au.tokens.Load().byID[p.TokenID])
	default:
		if p.Claims.ExpiresAt == nil || !au.core.Now().Before(p.Claims.ExpiresAt.Add(token.ClockLeeway)) {
			return engine.Principal{}, errBadToken
		}
		aud := token.AudUser
		if p.Kind == engine.AdminPrincipal {
			aud = token.AudAdmin
		}
		q, err = au.principalOf(ctx, p.Claims, aud)
	}
	if err != nil {
		return engine.Principal{}, err
	}
	q.Request = p.Request
	return q, nil
}

// Expiry is when p's credential expires (zero for anonymous callers).
func (au *Auth) Expiry(p engine.Principal) time.Time {
	switch {
	case p.Kind == engine.Anonymous:
		return time.Time{}
	case p.Claims == nil:
		if t := au.tokens.Load().byID[p.TokenID]; t != nil {
			return time.Unix(t.ExpiresAt, 0)
		}
		return time.Time{}
	case p.Claims.ExpiresAt == nil:
		return time.Time{}
	}
	return p.Claims.ExpiresAt.Add(token.ClockLeeway)
}

// principalOf checks verified claims against the state and builds the
// principal.
func (au *Auth) principalOf(ctx context.Context, c *token.Claims, aud string) (engine.Principal, error) {
	if au.revoked.has(c.RegisteredClaims.ID) || c.IssuedAt == nil {
		return engine.Principal{}, errBadToken
	}
	iat := c.IssuedAt.Unix()
	if aud == token.AudAdmin {
		a := au.adm.AdminByID(c.ID)
		if a == nil || iat <= a.tokensAfter {
			return engine.Principal{}, errBadToken
		}
		return engine.Principal{Kind: engine.AdminPrincipal, ID: a.ID, Email: a.Email, Role: engine.ParseRole(a.Role), TokenID: c.RegisteredClaims.ID, Claims: c}, nil
	}
	if c.ImpersonatedBy != "" && !au.impersonatorHolds(c.ImpersonatedBy, iat) {
		return engine.Principal{}, errBadToken
	}
	ci, err := au.authCollection(c.Collection)
	if err != nil {
		return engine.Principal{}, errBadToken
	}
	row, err := au.userByID(ctx, ci, c.ID)
	if err != nil {
		return engine.Principal{}, err
	}
	if row == nil {
		return engine.Principal{}, errBadToken
	}
	if reset := engine.AsInt64(row[ci.RowIndex("password_reset_at")]); reset > 0 && iat <= reset {
		return engine.Principal{}, errBadToken
	}
	var fields map[string]any
	if err := json.Unmarshal(ci.AppendRecord(nil, row, false), &fields); err != nil {
		return engine.Principal{}, err
	}
	email, _ := row[ci.RowIndex("email")].(string)
	return engine.Principal{Kind: engine.User, ID: c.ID, Email: email, Collection: ci.Name, TokenID: c.RegisteredClaims.ID, Claims: c, AuthRecord: fields}, nil
}

// impersonatorHolds reports whether an impersonation started by admin id
// with a token issued at iat may go on: the admin still exists with a role
// that may impersonate, signed nothing out since, and impersonation is on.
func (au *Auth) impersonatorHolds(id string, iat int64) bool {
	a := au.adm.AdminByID(id)
	return a != nil && iat > a.tokensAfter && engine.ParseRole(a.Role) >= impersonatorRole &&
		au.core.SettingBool("auth.impersonation.enabled")
}

// apiTokenPrincipal is the principal of API token t (nil: unknown).
func (au *Auth) apiTokenPrincipal(t *APIToken) (engine.Principal, error) {
	if t == nil || au.core.Now().Unix() >= t.ExpiresAt {
		return engine.Principal{}, errBadToken
	}
	a := au.adm.AdminByID(t.AdminID)
	if a == nil {
		return engine.Principal{}, errBadToken
	}
	return engine.Principal{Kind: engine.AdminPrincipal, ID: a.ID, Email: a.Email, Role: engine.ParseRole(a.Role), TokenID: t.ID, Scopes: t.Scopes}, nil
}
