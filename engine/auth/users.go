package auth

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"svcd/engine"
	"svcd/engine/password"
	"svcd/engine/schema"
	"svcd/engine/token"
	"svcd/fsm"
)

// UserSession is the answer to a user sign-in: a token and the record,
// or, for an account with TOTP on, an MFA ticket to exchange at
// /auth/:collection/login/mfa (then Token and Record are empty).
type UserSession struct {
	Token       string          `json:"token,omitempty"`
	Record      json.RawMessage `json:"record,omitempty"`
	MFARequired bool            `json:"mfa_required,omitempty"`
	MFAToken    string          `json:"mfa_token,omitempty"`
	// ImpersonatedBy is the admin of an impersonation session.
	ImpersonatedBy string `json:"impersonated_by,omitempty"`
	// TTL is the token lifetime, for the cookie's Max-Age (0 for a ticket).
	TTL time.Duration `json:"-"`
}

// Anonymous and impersonation session lifetimes (SPEC.md).
const (
	anonymousTTL     = 30 * 24 * time.Hour
	impersonationTTL = time.Hour
)

var (
	errNotAuthCollection = &engine.Error{Kind: engine.KindNotFound, Message: "Auth collection not found"}
	errBadToken          = &engine.Error{Kind: engine.KindUnauthorized, Message: "Invalid or expired token"}
)

// authCollection returns the auth collection name (or id).
func (au *Auth) authCollection(name string) (*engine.Coll, error) {
	ci := au.core.Coll(name)
	if ci == nil || ci.Type != schema.TypeAuth {
		return nil, errNotAuthCollection
	}
	return ci, nil
}

// AuthFeature reports whether feature (password, otp, anonymous, mfa,
// oauth2) is on for ci: the global auth.<feature>.enabled setting (for the
// features that have one) ANDed with the collection's auth_options.
func (au *Auth) authFeature(ci *engine.Coll, feature string) bool {
	o := ci.AuthOptions
	if o == nil {
		o = schema.DefaultAuthOptions()
	}
	switch feature {
	case "password":
		return o.Password
	case "otp":
		return o.OTP && au.core.SettingBool("auth.otp.enabled")
	case "anonymous":
		return o.Anonymous && au.core.SettingBool("auth.anonymous.enabled")
	case "mfa":
		return o.MFA && au.core.SettingBool("auth.mfa.enabled")
	case "oauth2":
		return o.OAuth2 && au.core.SettingBool("auth.oauth2.enabled")
	}
	return au.core.SettingBool("auth." + feature + ".enabled")
}

func errFeatureOff(what string) *engine.Error {
	return &engine.Error{Kind: engine.KindValidation, Message: what + " is disabled"}
}

// Register creates an account in auth collection name, under the
// collection's create rule (CreateRecord's checks apply).
func (au *Auth) Register(ctx context.Context, p engine.Principal, name string, body []byte) (*engine.Record, uint64, error) {
	ci, err := au.authCollection(name)
	if err != nil {
		return nil, 0, err
	}
	if !au.authFeature(ci, "password") {
		return nil, 0, errFeatureOff("Password sign-up")
	}
	return au.core.Records().CreateRecord(ctx, p, ci.Name, body)
}

// LoginUser checks an email and password against auth collection name and
// opens a session, or answers an MFA ticket when the account has TOTP on.
// ip is the client address, for the lockout. Unknown emails cost the same
// hashing work as known ones.
func (au *Auth) LoginUser(ctx context.Context, name, email, plain, ip string) (*UserSession, error) {
	ci, err := au.authCollection(name)
	if err != nil {
		return nil, err
	}
	if !au.authFeature(ci, "password") {
		return nil, errFeatureOff("Password sign-in")
	}
	key := lockoutKey(ci.ID, email, ip)
	if d := au.lockedFor(ctx, key); d > 0 {
		return nil, errLockedOut(d)
	}
	row, err := au.userByEmail(ctx, ci, email)
	if err != nil {
		return nil, err
	}
	hash := ""
	if row != nil && !asBool(row[ci.RowIndex("is_anonymous")]) {
		hash, _ = row[ci.RowIndex("password")].(string)
	}
	if hash == "" {
		password.Burn(plain, au.core.PasswordParams())
		au.loginFailed(ctx, key)
		return nil, ErrInvalidCreds
	}
	if !au.verifyUserPassword(ctx, ci, engine.AsString(row[0]), plain, hash) {
		au.loginFailed(ctx, key)
		return nil, ErrInvalidCreds
	}
	au.loginSucceeded(ctx, key)
	if t, err := au.fac.mfaGate(ctx, ci, engine.AsString(row[0])); t != nil || err != nil {
		return t, err
	}
	return au.issueUserSession(ci, row, 0, "")
}

// userByEmail reads an account by email (case-insensitive); nil if none.
func (au *Auth) userByEmail(ctx context.Context, ci *engine.Coll, email string) ([]any, error) {
	return au.userWhere(ctx, ci, `email = ? COLLATE NOCASE`, email)
}

// userByID reads an account by id; nil if none.
func (au *Auth) userByID(ctx context.Context, ci *engine.Coll, id string) ([]any, error) {
	return au.userWhere(ctx, ci, `id = ?`, id)
}

func (au *Auth) userWhere(ctx context.Context, ci *engine.Coll, cond string, arg any) ([]any, error) {
	var row []any
	err := au.core.Store().View(ctx, func(r *fsm.Reader) error {
		var err error
		row, err = ci.ScanRow(r.QueryRow("SELECT "+ci.SelectCols()+" FROM "+ci.Table()+" AS _r WHERE "+cond, arg).Scan)
		return err
	})
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return row, err
}

// issueUserSession signs a user token for row; authTime carries the
// original sign-in time across refreshes (0: now), impersonator marks an
// admin's impersonation token.
func (au *Auth) issueUserSession(ci *engine.Coll, row []any, authTime int64, impersonator string) (*UserSession, error) {
	anon := asBool(row[ci.RowIndex("is_anonymous")])
	ttl := au.adm.windowSetting("auth.user.window_seconds", 7*24*time.Hour)
	switch {
	case impersonator != "":
		ttl = impersonationTTL
	case anon:
		ttl = anonymousTTL
	}
	email, _ := row[ci.RowIndex("email")].(string)
	c := token.Claims{ID: engine.AsString(row[0]), Email: email, Collection: ci.ID, Anonymous: anon, ImpersonatedBy: impersonator, AuthTime: authTime}
	tok, _, err := au.signer.Issue(c, token.AudUser, issueAfter(au.core.Now(), engine.AsInt64(row[ci.RowIndex("password_reset_at")])), ttl)
	if err != nil {
		return nil, fmt.Errorf("engine: issue token: %w", err)
	}
	return &UserSession{Token: tok, Record: ci.AppendRecord(nil, row, false), TTL: ttl}, nil
}

// RefreshedSession is a new token for the caller's session, with the user
// record or the admin.
type RefreshedSession struct {
	Token  string          `json:"token"`
	Record json.RawMessage `json:"record,omitempty"`
	Admin  *Admin          `json:"admin,omitempty"`
	TTL    time.Duration   `json:"-"`
}

var errSessionTooOld = &engine.Error{Kind: engine.KindUnauthorized, Message: "The session is too old to refresh; sign in again"}

// Refresh issues a new token for p's session (a new jti and expiry, the
// original sign-in time kept) and revokes the old one. A session whose
// sign-in is older than auth.refresh.window_seconds must sign in again.
func (au *Auth) Refresh(ctx context.Context, p engine.Principal) (*RefreshedSession, uint64, error) {
	if p.Claims == nil || p.Kind == engine.Anonymous {
		return nil, 0, errAuthRequired
	}
	window := au.adm.windowSetting("auth.refresh.window_seconds", 7*24*time.Hour)
	if p.Claims.ImpersonatedBy != "" {
		// An impersonation lasts an hour from when the admin started it,
		// however often it is refreshed.
		window = impersonationTTL
	}
	authTime := p.Claims.AuthTime
	if authTime == 0 && p.Claims.IssuedAt != nil {
		authTime = p.Claims.IssuedAt.Unix()
	}
	if au.core.Now().Sub(time.Unix(authTime, 0)) > window {
		return nil, 0, errSessionTooOld
	}
	var out *RefreshedSession
	switch p.Kind {
	case engine.AdminPrincipal:
		a := au.adm.AdminByID(p.ID)
		if a == nil {
			return nil, 0, errBadToken
		}
		s, _, err := au.adm.openAdminSession(ctx, a, authTime, ClientInfo{})
		if err != nil {
			return nil, 0, err
		}
		out = &RefreshedSession{Token: s.Token, Admin: a, TTL: s.TTL}
	default:
		ci, err := au.authCollection(p.Claims.Collection)
		if err != nil {
			return nil, 0, errBadToken
		}
		row, err := au.userByID(ctx, ci, p.ID)
		if err != nil || row == nil {
			return nil, 0, errBadToken
		}
		s, err := au.issueUserSession(ci, row, authTime, p.Claims.ImpersonatedBy)
		if err != nil {
			return nil, 0, err
		}
		out = &RefreshedSession{Token: s.Token, Record: s.Record, TTL: s.TTL}
	}
	idx, err := au.Revoke(ctx, revokedOf(p.Claims))
	return out, idx, err
}

// Logout revokes the token p signed in with.
func (au *Auth) Logout(ctx context.Context, p engine.Principal) (uint64, error) {
	if p.Claims == nil {
		return 0, errAuthRequired
	}
	return au.Revoke(ctx, revokedOf(p.Claims))
}

func revokedOf(c *token.Claims) RevokedToken {
	t := RevokedToken{JTI: c.RegisteredClaims.ID}
	if c.ExpiresAt != nil {
		t.Exp = c.ExpiresAt.Unix()
	}
	return t
}

// Me describes the caller's token.
type Me struct {
	ID    string `json:"id"`
	Email string `json:"email"`
	Aud   string `json:"aud"`
	Exp   int64  `json:"exp"`
}

// WhoAmI describes p (SPEC.md's GET /auth/me).
func WhoAmI(p engine.Principal) (*Me, error) {
	if p.Claims == nil || p.Kind == engine.Anonymous {
		return nil, errAuthRequired
	}
	m := &Me{ID: p.ID, Email: p.Email}
	if len(p.Claims.Audience) > 0 {
		m.Aud = p.Claims.Audience[0]
	}
	if p.Claims.ExpiresAt != nil {
		m.Exp = p.Claims.ExpiresAt.Unix()
	}
	return m, nil
}

var errAuthRequired = &engine.Error{Kind: engine.KindUnauthorized, Message: "The request requires valid authorization"}

func asBool(v any) bool {
	switch x := v.(type) {
	case bool:
		return x
	case int64:
		return x != 0
	}
	return false
}
