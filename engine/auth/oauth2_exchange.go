package auth

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"svcd/engine"
	"svcd/engine/auth/oauth2"
	"svcd/fsm"
)

// mergeTokenTTL is a merge token's life (CONTRACT.md).
const mergeTokenTTL = 10 * time.Minute

// OAuth2Domain is the domain of the synthetic emails of accounts made for
// identities without a verified email (RFC 2606 reserves .invalid).
const OAuth2Domain = "oauth2.invalid"

// ExchangeRequest is POST /auth/:collection/oauth2/exchange's body.
type ExchangeRequest struct {
	Provider     string `json:"provider"`
	Code         string `json:"code"`
	RedirectURI  string `json:"redirectUri"`
	State        string `json:"state"`
	CodeVerifier string `json:"code_verifier"`
}

// OAuth2Result answers an exchange or a merge-confirm: a session (or an
// MFA ticket) with the identity the provider gave, or, for a verified
// email of an existing account, a merge token.
type OAuth2Result struct {
	*UserSession
	// Meta is the provider's identity; IsNew when the exchange made the
	// account.
	Meta *OAuth2Meta `json:"meta,omitempty"`
	// MergeRequired: the identity's verified email is an existing
	// account's; prove that account with MergeToken at merge-confirm
	// within ExpiresIn seconds.
	MergeRequired bool   `json:"merge_required,omitempty"`
	MergeToken    string `json:"merge_token,omitempty"`
	Provider      string `json:"provider,omitempty"`
	Email         string `json:"email,omitempty"`
	ExpiresIn     int    `json:"expires_in,omitempty"`
}

// OAuth2Meta is the identity a sign-in was made with.
type OAuth2Meta struct {
	oauth2.Identity
	IsNew bool `json:"is_new"`
}

// oauth2Taken is what spending an authorization answers.
type oauth2Taken struct {
	Status    string `json:"status"`
	PKCE      string `json:"pkce,omitempty"`
	Challenge string `json:"challenge,omitempty"`
}

type oauth2TakeCmd struct {
	Key         string `json:"key"`
	Coll        string `json:"coll"`
	Provider    string `json:"provider"`
	RedirectURI string `json:"redirect_uri"`
	Now         int64  `json:"now"`
}

// oauth2OutcomeCmd decides what an identity signs in to, when applied.
type oauth2OutcomeCmd struct {
	Coll     string `json:"coll"`
	Provider string `json:"provider"`
	Subject  string `json:"subject"`
	// Email is the provider's address ("" when none or malformed) and
	// Verified whether the provider verified it.
	Email    string `json:"email"`
	Verified bool   `json:"verified"`
	// LinkTo is the signed-in account to link the identity to.
	LinkTo string `json:"link_to,omitempty"`
	// Create is the account made when no account matches; Ver the
	// collection version it was prepared for.
	Create *engine.RecordCreate `json:"create,omitempty"`
	Ver    int64                `json:"ver"`
	// MergeHash is the keyed hash of the merge token answered when the
	// email is an existing account's.
	MergeHash string `json:"merge_hash"`
	MergeExp  int64  `json:"merge_exp"`
	Now       int64  `json:"now"`
}

// Outcomes of an exchange.
const (
	outSignIn   = "signin"   // the identity's account
	outLinked   = "linked"   // linked to the signed-in caller
	outCreated  = "created"  // a new account
	outMerge    = "merge"    // a verified email of an account: merge token
	outConflict = "conflict" // an unverified email of an account
	outTaken    = "taken"    // linked to another account than the caller
	outHasOne   = "has_one"  // the caller has another identity of the provider
)

// Exchange finishes a sign-in: it spends the authorization named by
// in.State (any node's), exchanges the code with the provider and
// decides, when applied, what the identity signs in to. p is the caller:
// a user of the collection signed in with their own token links the
// identity to their account.
func (o *OAuth2) Exchange(ctx context.Context, p engine.Principal, coll string, in ExchangeRequest) (*OAuth2Result, uint64, error) {
	ci, ps, err := o.oauth2Open(coll, in.Provider)
	if err != nil {
		return nil, 0, err
	}
	d := blankDetails("code", in.Code)
	if msg := o.checkRedirect(in.Provider, in.RedirectURI); msg != "" {
		d["redirectUri"] = msg
	}
	if in.CodeVerifier != "" && !validChallenge(in.CodeVerifier) {
		d["code_verifier"] = "must be 43 to 128 characters of A-Z, a-z, 0-9, '-', '.', '_', '~'"
	}
	if in.State == "" && ps.pkce && in.CodeVerifier == "" {
		d["code_verifier"] = "is required: " + ps.p.Name + " always uses PKCE (or send the state of an authorization begun here)"
	}
	if len(d) > 0 {
		return nil, 0, engine.ValidationError(d)
	}
	linkTo, err := o.linkTarget(ctx, p, ci)
	if err != nil {
		return nil, 0, err
	}
	if o.client == nil {
		return nil, 0, errOAuth2Unavailable
	}
	x := &oauth2.Exchange{Provider: ps.p, Config: ps.cfg, Code: in.Code, RedirectURI: in.RedirectURI, Verifier: in.CodeVerifier}
	var idx uint64
	if in.State != "" {
		key := o.au.macHex(keyOAuth2State, ci.ID, in.State)
		res, i, err := o.au.core.Propose(ctx, cmdOAuth2TakeState, oauth2TakeCmd{
			Key: key, Coll: ci.ID, Provider: ps.p.Name, RedirectURI: in.RedirectURI, Now: o.au.core.Now().Unix(),
		})
		idx = i
		if err != nil {
			return nil, idx, err
		}
		t, _ := res.(*oauth2Taken)
		if t == nil || t.Status != "ok" {
			return nil, idx, errBadOAuth2State
		}
		switch t.PKCE {
		case pkceServer:
			x.Verifier = o.au.macHex(keyOAuth2PKCE, key)
		case pkceClient:
			if in.CodeVerifier == "" || s256(in.CodeVerifier) != t.Challenge {
				return nil, idx, errBadOAuth2State
			}
		}
		if ps.p.IDToken {
			x.Nonce = o.au.macHex(keyOAuth2Nonce, key)
		}
	}
	id, err := o.client.Exchange(ctx, x)
	if err != nil {
		return nil, idx, o.exchangeFailed(ps.p.Name, err)
	}
	return o.signInWith(ctx, ci, id, linkTo)
}

// linkTarget is the account an exchange links to: the caller's, when the
// caller is a user of ci signed in with their own token; "" otherwise
// (admins, API tokens and users of other collections sign nobody in by
// being signed in).
func (o *OAuth2) linkTarget(ctx context.Context, p engine.Principal, ci *engine.Coll) (string, error) {
	if p.Kind != engine.User || p.Claims == nil {
		return "", nil
	}
	if c := o.au.core.Coll(p.Collection); c == nil || c.ID != ci.ID {
		return "", nil
	}
	if p.Claims.ImpersonatedBy != "" {
		return "", errImpersonatedLink
	}
	row, err := o.au.ownUser(ctx, p, ci)
	if err != nil {
		return "", err
	}
	if asBool(row[ci.RowIndex("is_anonymous")]) {
		return "", errNoAnonymous
	}
	return p.ID, nil
}

// signInWith proposes the outcome for identity id and answers it.
func (o *OAuth2) signInWith(ctx context.Context, ci *engine.Coll, id *oauth2.Identity, linkTo string) (*OAuth2Result, uint64, error) {
	email, _ := normalizeEmail(id.Email)
	if email == "" {
		id.Verified = false
	}
	token, err := randomToken(32)
	if err != nil {
		return nil, 0, err
	}
	for attempt := 0; ; attempt++ {
		now := o.au.core.Now().Unix()
		cmd := oauth2OutcomeCmd{
			Coll: ci.ID, Provider: id.Provider, Subject: id.ID, Email: email, Verified: id.Verified, LinkTo: linkTo,
			Ver: ci.Version, MergeHash: o.au.macHex(keyOAuth2Merge, token), MergeExp: now + int64(mergeTokenTTL/time.Second), Now: now,
		}
		if linkTo == "" {
			if cmd.Create, err = o.newAccount(ci, id, email, now); err != nil {
				return nil, 0, err
			}
		}
		res, idx, err := o.au.core.Propose(ctx, cmdOAuth2Outcome, cmd)
		if errors.Is(err, engine.ErrSchemaMoved) && attempt < 3 {
			if ci, err = o.au.authCollection(ci.ID); err != nil {
				return nil, idx, err
			}
			continue
		}
		if err != nil {
			return nil, idx, err
		}
		out := outcomeOf(res)
		switch out.Status {
		case outMerge:
			return &OAuth2Result{MergeRequired: true, MergeToken: token, Provider: id.Provider, Email: email,
				ExpiresIn: int(mergeTokenTTL / time.Second)}, idx, nil
		case outConflict:
			return nil, idx, &engine.Error{Kind: engine.KindConflict,
				Message: "An account with this email exists, and " + id.Provider + " does not say the email is verified: sign in to that account and link " + id.Provider + " from it",
				Details: map[string]any{"email": email, "provider": id.Provider}}
		case outTaken:
			return nil, idx, &engine.Error{Kind: engine.KindConflict, Message: "This " + id.Provider + " identity is linked to another account"}
		case outHasOne:
			return nil, idx, &engine.Error{Kind: engine.KindConflict, Message: "The account is linked to another " + id.Provider + " identity; unlink it first"}
		}
		s, err := o.session(ctx, ci, out.UserID, out.Status != outCreated && out.Status != outLinked)
		if err != nil {
			return nil, idx, err
		}
		return &OAuth2Result{UserSession: s, Meta: &OAuth2Meta{Identity: *id, IsNew: out.Status == outCreated}}, idx, nil
	}
}

// session signs user uid of ci in; with mfa, an account with TOTP on gets
// an MFA ticket instead.
func (o *OAuth2) session(ctx context.Context, ci *engine.Coll, uid string, mfa bool) (*UserSession, error) {
	if mfa {
		if t, err := o.au.fac.mfaGate(ctx, ci, uid); t != nil || err != nil {
			return t, err
		}
	}
	row, err := o.au.userByID(ctx, ci, uid)
	if err != nil || row == nil {
		return nil, engine.FirstErr(err, errBadToken)
	}
	return o.au.issueUserSession(ci, row, 0, "")
}

// newAccount prepares the account an identity gets when nothing matches:
// the provider's email when the provider verified it (email_verified
// set), else a synthetic one (an unverified address would let whoever
// typed it at the provider hold an account in its owner's name); a text
// field "name" and a url or text field "avatar" (or "avatar_url") get the
// provider's values when they fit.
func (o *OAuth2) newAccount(ci *engine.Coll, id *oauth2.Identity, email string, now int64) (*engine.RecordCreate, error) {
	verified := id.Verified && email != ""
	if !verified {
		var b [16]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, fmt.Errorf("engine: random: %w", err)
		}
		email = id.Provider + "_" + hex.EncodeToString(b[:]) + "@" + OAuth2Domain
	}
	fields := ci.RowFields()
	values := make([]any, len(fields))
	for i, f := range fields {
		switch {
		case f.System() && f.Name == "email":
			values[i] = email
		case f.System() && f.Name == "email_verified":
			values[i] = map[bool]int64{true: 1, false: 0}[verified]
		case f.System() && f.Type == "bool":
			values[i] = int64(0)
		case f.System():
			values[i] = nil
		case f.Type == "autodate":
			if f.OnCreate || f.OnUpdate {
				values[i] = now
			}
		default:
			values[i] = profileValue(f, id)
		}
	}
	return o.au.core.Records().AccountCreate(ci, engine.NewID(), now, values), nil
}

// profileValue is the value of custom field f of a new account: the
// provider's name or avatar URL where the field is meant for it and the
// value is valid, else the field's empty value.
func profileValue(f *engine.FieldInfo, id *oauth2.Identity) any {
	var v string
	switch {
	case f.Encrypted || f.Unique:
	case f.Name == "name" && f.Type == "text":
		v = id.Name
	case (f.Name == "avatar" || f.Name == "avatar_url") && (f.Type == "url" || f.Type == "text"):
		v = id.AvatarURL
	}
	if v != "" {
		if stored, msg := f.FieldType().Normalize(f.Field, v); msg == "" {
			return stored
		}
	}
	return f.EmptyValue()
}

// applyTakeState spends an authorization: it must exist, be unexpired and
// match the exchange's collection, provider and redirect URI. It is
// removed whatever the answer (an exchange that does not match it is a
// forgery or a mix-up, and the authorization is not offered again).
func (o *OAuth2) applyTakeState(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[oauth2TakeCmd](cmd)
	if err != nil {
		return nil, err
	}
	var coll, provider, redirect, pkce, challenge string
	var exp int64
	err = tx.QueryRow(`DELETE FROM _svc_oauth2_states WHERE key = ? RETURNING coll, provider, redirect_uri, pkce, challenge, expires_at`,
		c.Key).Scan(&coll, &provider, &redirect, &pkce, &challenge, &exp)
	if errors.Is(err, sql.ErrNoRows) {
		return &oauth2Taken{Status: "invalid"}, nil
	}
	if err != nil {
		return nil, err
	}
	if exp < c.Now || coll != c.Coll || provider != c.Provider || redirect != c.RedirectURI {
		return &oauth2Taken{Status: "invalid"}, nil
	}
	return &oauth2Taken{Status: "ok", PKCE: pkce, Challenge: challenge}, nil
}

// applyOutcome decides what the identity signs in to (see the outcome
// constants), in this order: its link; a link to the signed-in caller; a
// merge token for a verified email of an account (an unverified one is a
// conflict); a new account.
func (o *OAuth2) applyOutcome(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[oauth2OutcomeCmd](cmd)
	if err != nil {
		return nil, err
	}
	ci, err := o.au.authCollForApply(tx, c.Coll)
	if err != nil {
		return nil, err
	}
	if _, err := tx.Exec(`DELETE FROM _svc_oauth2_merges WHERE expires_at < ?`, c.Now); err != nil {
		return nil, err
	}
	linked, err := linkedUser(tx, c.Coll, c.Provider, c.Subject)
	if err != nil {
		return nil, err
	}
	switch {
	case linked != "" && c.LinkTo != "" && linked != c.LinkTo:
		return outcome(outTaken), nil
	case linked != "":
		_, err := tx.Exec(`UPDATE _svc_oauth2_links SET email = ?, last_used = ? WHERE coll = ? AND provider = ? AND subject = ?`,
			c.Email, c.Now, c.Coll, c.Provider, c.Subject)
		return &flowOutcome{Status: outSignIn, UserID: linked}, err
	case c.LinkTo != "":
		row, err := userRowTx(tx, ci, c.LinkTo)
		if err != nil || row == nil {
			return nil, engine.FirstErr(err, errBadToken)
		}
		status, err := linkTx(tx, c.Coll, c.Provider, c.Subject, c.LinkTo, c.Email, c.Now)
		return &flowOutcome{Status: status, UserID: c.LinkTo}, err
	}
	if c.Email != "" {
		var uid string
		err := tx.QueryRow("SELECT id FROM "+ci.Table()+" WHERE email = ? COLLATE NOCASE", c.Email).Scan(&uid)
		switch {
		case err == nil && !c.Verified:
			return outcome(outConflict), nil
		case err == nil:
			_, err := tx.Exec(`INSERT INTO _svc_oauth2_merges (hash, coll, user_id, provider, subject, email, attempts, expires_at)
				VALUES (?, ?, ?, ?, ?, ?, 0, ?)`, c.MergeHash, c.Coll, uid, c.Provider, c.Subject, c.Email, c.MergeExp)
			return &flowOutcome{Status: outMerge, UserID: uid}, err
		case !errors.Is(err, sql.ErrNoRows):
			return nil, err
		}
	}
	if c.Create == nil {
		return nil, errBadToken
	}
	if ci.Version != c.Ver {
		return nil, engine.ErrSchemaMoved
	}
	row, err := o.au.core.Records().ApplyRecordCreateRow(tx, ci, c.Create)
	if err != nil {
		return nil, err
	}
	uid := engine.AsString(row[0])
	if _, err := linkTx(tx, c.Coll, c.Provider, c.Subject, uid, c.Email, c.Now); err != nil {
		return nil, err
	}
	return &flowOutcome{Status: outCreated, UserID: uid}, nil
}

// linkedUser is the account the identity is linked to ("" if none).
func linkedUser(tx *fsm.Tx, coll, provider, subject string) (string, error) {
	var uid string
	err := tx.QueryRow(`SELECT user_id FROM _svc_oauth2_links WHERE coll = ? AND provider = ? AND subject = ?`,
		coll, provider, subject).Scan(&uid)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return uid, err
}

// linkTx links the identity to account uid, which must not have another
// identity of the provider: outLinked, or outHasOne.
func linkTx(tx *fsm.Tx, coll, provider, subject, uid, email string, now int64) (string, error) {
	var n int
	if err := tx.QueryRow(`SELECT count(*) FROM _svc_oauth2_links WHERE coll = ? AND user_id = ? AND provider = ?`,
		coll, uid, provider).Scan(&n); err != nil {
		return "", err
	}
	if n > 0 {
		return outHasOne, nil
	}
	_, err := tx.Exec(`INSERT INTO _svc_oauth2_links (coll, provider, subject, user_id, email, created, last_used)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, coll, provider, subject, uid, email, now, now)
	return outLinked, err
}
