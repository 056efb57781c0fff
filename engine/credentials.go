package engine

import (
	"context"
	"encoding/json"
	"strings"
	"time"

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
const impersonatorRole = RoleEditor

// Authenticate verifies a bearer token (admin, user or API token) and
// returns the caller.
func (e *Engine) Authenticate(ctx context.Context, raw string) (Principal, error) {
	if strings.HasPrefix(raw, APITokenPrefix) {
		return e.apiTokenPrincipal(e.tokens.Load().byHash[hashAPIToken(raw)])
	}
	c, aud, err := e.signer.VerifyAny(raw, token.AudAdmin, token.AudUser)
	if err != nil {
		return Principal{}, errBadToken
	}
	return e.principalOf(ctx, c, aud)
}

// Recheck decides again whether p's credential holds against the state
// this replica has applied now, and returns the principal as it stands
// (current role, scopes and account fields), keeping p.Request. An
// anonymous principal always holds.
func (e *Engine) Recheck(ctx context.Context, p Principal) (Principal, error) {
	var q Principal
	var err error
	switch {
	case p.Kind == Anonymous:
		return p, nil
	case p.Claims == nil:
		q, err = e.apiTokenPrincipal(e.tokens.Load().byID[p.TokenID])
	default:
		if p.Claims.ExpiresAt == nil || !e.now().Before(p.Claims.ExpiresAt.Add(token.ClockLeeway)) {
			return Principal{}, errBadToken
		}
		aud := token.AudUser
		if p.Kind == AdminPrincipal {
			aud = token.AudAdmin
		}
		q, err = e.principalOf(ctx, p.Claims, aud)
	}
	if err != nil {
		return Principal{}, err
	}
	q.Request = p.Request
	return q, nil
}

// Expiry is when p's credential expires (zero for anonymous callers).
func (e *Engine) Expiry(p Principal) time.Time {
	switch {
	case p.Kind == Anonymous:
		return time.Time{}
	case p.Claims == nil:
		if t := e.tokens.Load().byID[p.TokenID]; t != nil {
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
func (e *Engine) principalOf(ctx context.Context, c *token.Claims, aud string) (Principal, error) {
	if e.revoked.has(c.RegisteredClaims.ID) || c.IssuedAt == nil {
		return Principal{}, errBadToken
	}
	iat := c.IssuedAt.Unix()
	if aud == token.AudAdmin {
		a := e.AdminByID(c.ID)
		if a == nil || iat <= a.tokensAfter {
			return Principal{}, errBadToken
		}
		return Principal{Kind: AdminPrincipal, ID: a.ID, Email: a.Email, Role: ParseRole(a.Role), TokenID: c.RegisteredClaims.ID, Claims: c}, nil
	}
	if c.ImpersonatedBy != "" && !e.impersonatorHolds(c.ImpersonatedBy, iat) {
		return Principal{}, errBadToken
	}
	ci, err := e.authCollection(c.Collection)
	if err != nil {
		return Principal{}, errBadToken
	}
	row, err := e.userByID(ctx, ci, c.ID)
	if err != nil {
		return Principal{}, err
	}
	if row == nil {
		return Principal{}, errBadToken
	}
	if reset := asInt64(row[ci.rowIndex("password_reset_at")]); reset > 0 && iat <= reset {
		return Principal{}, errBadToken
	}
	var fields map[string]any
	if err := json.Unmarshal(ci.appendRecord(nil, row, false, nil), &fields); err != nil {
		return Principal{}, err
	}
	email, _ := row[ci.rowIndex("email")].(string)
	return Principal{Kind: User, ID: c.ID, Email: email, Collection: ci.Name, TokenID: c.RegisteredClaims.ID, Claims: c, AuthRecord: fields}, nil
}

// impersonatorHolds reports whether an impersonation started by admin id
// with a token issued at iat may go on: the admin still exists with a role
// that may impersonate, signed nothing out since, and impersonation is on.
func (e *Engine) impersonatorHolds(id string, iat int64) bool {
	a := e.AdminByID(id)
	return a != nil && iat > a.tokensAfter && ParseRole(a.Role) >= impersonatorRole &&
		e.SettingBool("auth.impersonation.enabled")
}

// apiTokenPrincipal is the principal of API token t (nil: unknown).
func (e *Engine) apiTokenPrincipal(t *APIToken) (Principal, error) {
	if t == nil || e.now().Unix() >= t.ExpiresAt {
		return Principal{}, errBadToken
	}
	a := e.AdminByID(t.AdminID)
	if a == nil {
		return Principal{}, errBadToken
	}
	return Principal{Kind: AdminPrincipal, ID: a.ID, Email: a.Email, Role: ParseRole(a.Role), TokenID: t.ID, Scopes: t.Scopes}, nil
}
