package auth

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"svcd/engine"
	"svcd/engine/password"
	"svcd/engine/schema"
	"svcd/engine/token"
	"svcd/fsm"
)

// Admin is an operator account. The password hash never leaves the engine.
type Admin struct {
	ID      string `json:"id"`
	Email   string `json:"email"`
	Role    string `json:"role"`
	Created int64  `json:"created"`
	Updated int64  `json:"updated"`
	hash    string
	// tokensAfter: admin tokens issued at or before it (unix seconds) are
	// refused; tokens signed in that second are dated the next one.
	tokensAfter int64
}

type adminSet struct {
	byID    map[string]*Admin
	byEmail map[string]*Admin // lower-cased
}

// AdminSession is the answer to setup and login.
type AdminSession struct {
	Token string `json:"token"`
	Admin *Admin `json:"admin"`
	// TTL is the token lifetime, for the cookie's Max-Age.
	TTL time.Duration `json:"-"`
}

type adminCreateCmd struct {
	ID      string `json:"id"`
	Email   string `json:"email"`
	Hash    string `json:"hash"`
	Role    string `json:"role"`
	Created int64  `json:"created"`
	// Setup creates the first admin only: it fails if any admin exists.
	Setup bool `json:"setup"`
}

// HasAdmin reports whether any admin exists.
func (ad *Admins) HasAdmin() bool { return len(ad.au.admins.Load().byID) > 0 }

// AdminByID returns a current admin, or nil.
func (ad *Admins) AdminByID(id string) *Admin { return ad.au.admins.Load().byID[id] }

var emailField = &schema.Field{Name: "email", Type: schema.FieldEmail, Required: true}

// prepareAdmin validates credentials and hashes the password.
func (ad *Admins) prepareAdmin(email, plain, role string, setup bool) (*adminCreateCmd, *engine.Error) {
	d := map[string]string{}
	stored, msg := schema.NormalizeValue(emailField, email)
	if msg != "" {
		d["email"] = msg
	}
	if msg := ad.au.core.Records().CheckPasswordPolicy(plain); msg != "" {
		d["password"] = msg
	}
	if role == "" {
		role = engine.RoleEditor.String()
	}
	if engine.ParseRole(role) == engine.RoleNone {
		d["role"] = "must be viewer, editor, developer or owner"
	}
	if len(d) > 0 {
		return nil, engine.ValidationError(d)
	}
	h, err := password.Hash(plain, ad.au.core.PasswordParams())
	if err != nil {
		return nil, engine.Errorf(engine.KindInternal, "could not hash the password")
	}
	s, _ := stored.(string)
	return &adminCreateCmd{
		ID: "adm_" + engine.NewID(), Email: s, Hash: h, Role: role, Created: ad.au.core.Now().Unix(), Setup: setup,
	}, nil
}

// SetupAdmin creates the first admin (an owner) and signs it in. It fails
// with 409 once any admin exists, decided at apply time so two racing
// setups cannot both win.
func (ad *Admins) SetupAdmin(ctx context.Context, email, plain string, client ClientInfo) (*AdminSession, uint64, error) {
	if ad.HasAdmin() {
		return nil, 0, errAdminExists
	}
	cmd, verr := ad.prepareAdmin(email, plain, engine.RoleOwner.String(), true)
	if verr != nil {
		return nil, 0, verr
	}
	_, idx, err := ad.au.core.Propose(ctx, cmdAdminCreate, cmd)
	if err != nil {
		return nil, idx, err
	}
	a := ad.AdminByID(cmd.ID)
	if a == nil {
		return nil, idx, engine.Errorf(engine.KindInternal, "admin not visible after commit")
	}
	return ad.openAdminSession(ctx, a, 0, client)
}

// CreateOwner creates an owner admin (the shell's `svcd admin create`).
func (ad *Admins) CreateOwner(ctx context.Context, email, plain string) (*Admin, uint64, error) {
	cmd, verr := ad.prepareAdmin(email, plain, engine.RoleOwner.String(), false)
	if verr != nil {
		return nil, 0, verr
	}
	_, idx, err := ad.au.core.Propose(ctx, cmdAdminCreate, cmd)
	if err != nil {
		return nil, idx, err
	}
	return ad.AdminByID(cmd.ID), idx, nil
}

// LoginAdmin checks credentials and issues an admin token. Unknown emails
// cost the same hashing work as known ones.
func (ad *Admins) LoginAdmin(ctx context.Context, email, plain string, client ClientInfo) (*AdminSession, error) {
	key := lockoutKey("_admins", email, client.IP)
	if d := ad.au.lockedFor(ctx, key); d > 0 {
		return nil, errLockedOut(d)
	}
	a := ad.au.admins.Load().byEmail[strings.ToLower(strings.TrimSpace(email))]
	if a == nil {
		password.Burn(plain, ad.au.core.PasswordParams())
		ad.au.loginFailed(ctx, key)
		return nil, ErrInvalidCreds
	}
	if !ad.verifyAdminPassword(ctx, a, plain) {
		ad.au.loginFailed(ctx, key)
		return nil, ErrInvalidCreds
	}
	ad.au.loginSucceeded(ctx, key)
	s, _, err := ad.openAdminSession(ctx, a, 0, client)
	return s, err
}

func (ad *Admins) windowSetting(key string, def time.Duration) time.Duration {
	if n, err := strconv.ParseInt(ad.au.core.Setting(key), 10, 64); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	return def
}

// signAdmin signs an admin token; authTime carries the original sign-in
// time across refreshes (0: now). It returns the session and the jti.
func (ad *Admins) signAdmin(a *Admin, authTime int64) (*AdminSession, string, error) {
	ttl := ad.adminTTL()
	tok, jti, err := ad.au.signer.Issue(token.Claims{ID: a.ID, Email: a.Email, Collection: token.AdminsCollection, AuthTime: authTime}, token.AudAdmin, issueAfter(ad.au.core.Now(), a.tokensAfter), ttl)
	if err != nil {
		return nil, "", fmt.Errorf("engine: issue token: %w", err)
	}
	return &AdminSession{Token: tok, Admin: a, TTL: ttl}, jti, nil
}

func (ad *Admins) applyAdminCreate(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[adminCreateCmd](cmd)
	if err != nil {
		return nil, err
	}
	if c.Setup {
		var n int
		if err := tx.QueryRow(`SELECT count(*) FROM _svc_admins`).Scan(&n); err != nil {
			return nil, err
		}
		if n > 0 {
			return nil, errAdminExists
		}
	}
	_, err = tx.Exec(`INSERT INTO _svc_admins (id, email, password, role, created, updated) VALUES (?, ?, ?, ?, ?, ?)`,
		c.ID, c.Email, c.Hash, c.Role, c.Created, c.Created)
	if engine.IsUniqueViolation(err) {
		return nil, engine.FieldError("email", "an admin with this email already exists")
	}
	if err != nil {
		return nil, err
	}
	tx.Emit(fsm.Event{Kind: evAdmins, Subject: c.ID})
	return nil, nil
}

func (ad *Admins) reloadAdmins(ctx context.Context) error {
	set := &adminSet{byID: map[string]*Admin{}, byEmail: map[string]*Admin{}}
	err := ad.au.core.Store().View(ctx, func(r *fsm.Reader) error {
		cols := `id, email, password, role, created, updated, 0`
		if ad.au.core.InternalVersion() >= 2 {
			cols = `id, email, password, role, created, updated, tokens_after`
		}
		rows, err := r.Query(`SELECT ` + cols + ` FROM _svc_admins`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			a := &Admin{}
			if err := rows.Scan(&a.ID, &a.Email, &a.hash, &a.Role, &a.Created, &a.Updated, &a.tokensAfter); err != nil {
				return err
			}
			set.byID[a.ID] = a
			set.byEmail[strings.ToLower(a.Email)] = a
		}
		return rows.Err()
	})
	if err != nil {
		return fmt.Errorf("engine: load admins: %w", err)
	}
	ad.au.admins.Store(set)
	return nil
}
