package files

import (
	"context"
	"time"

	"svcd/engine"
	"svcd/engine/token"
	"svcd/fsm"
)

// File tokens (SPEC.md: POST /files/:collection/:recordId/:field/:filename/token).
// A token is a JWT of audience file, signed with the node-shared key: it
// names its subject as a session does (a user, an admin, or the API token
// it was minted with), the one file it opens, and, for a bindTokenIp
// field, the client address that asked for it. At download its subject is
// checked again (Credentials.Recheck: nothing revoked it since) and the
// rules are decided for that subject. A oneTimeToken field's token is
// spent through the log (cmdTokenUse): the replay answer (410) is the same
// on every node, and a token spent on one node is spent on all.

// FileToken is the answer of the token endpoint.
type FileToken struct {
	Token     string `json:"token"`
	ExpiresAt int64  `json:"expires_at"`
}

// Token issues a file token for file name of field of record id of coll
// to p, who must be signed in and may download the file now (the token
// requirement of a protected field aside). ip is the client's address
// (bound when the field has bindTokenIp).
func (m *Files) Token(ctx context.Context, p engine.Principal, coll, id, field, name, ip string) (*FileToken, error) {
	if p.Kind == engine.Anonymous {
		return nil, errAuthRequired
	}
	ci := m.core.Coll(coll)
	if ci == nil {
		return nil, engine.ErrNotFound
	}
	f, _ := fileField(ci, field)
	if f == nil {
		return nil, errNoFileField
	}
	meta, err := m.lookup(ctx, name)
	if err != nil {
		return nil, err
	}
	if meta.CollectionID != ci.ID || meta.RecordID != id || meta.FieldID != f.ID {
		return nil, errNoFile
	}
	if err := m.mayDownload(ctx, p, ci, f, meta.RecordID); err != nil {
		return nil, err
	}
	c := token.Claims{File: name, Admin: p.IsAdmin(), ID: p.ID, Email: p.Email}
	switch {
	case p.Claims != nil:
		c.Collection, c.Anonymous, c.ImpersonatedBy, c.AuthTime = p.Claims.Collection, p.Claims.Anonymous, p.Claims.ImpersonatedBy, p.Claims.AuthTime
	case p.IsAdmin():
		c.APIToken = p.TokenID
	}
	if f.BindTokenIP {
		c.IP = ip
	}
	now := m.core.Now()
	ttl := time.Duration(m.tokenTTL()) * time.Second
	raw, _, err := m.signer.Issue(c, token.AudFile, now, ttl)
	if err != nil {
		return nil, err
	}
	return &FileToken{Token: raw, ExpiresAt: now.Add(ttl).Unix()}, nil
}

// AnyFile is the File claim of a token that opens every file its subject
// may view (PocketBase's file token, POST /api/files/token), except the
// files of oneTimeToken and bindTokenIp fields, which keep needing a
// token of their own.
const AnyFile = "*"

// AnyToken issues a file token for every file p may view (AnyFile), with
// the lifetime of the per-file tokens. p must be signed in.
func (m *Files) AnyToken(ctx context.Context, p engine.Principal) (*FileToken, error) {
	if p.Kind == engine.Anonymous {
		return nil, errAuthRequired
	}
	c := token.Claims{File: AnyFile, Admin: p.IsAdmin(), ID: p.ID, Email: p.Email}
	switch {
	case p.Claims != nil:
		c.Collection, c.Anonymous, c.ImpersonatedBy, c.AuthTime = p.Claims.Collection, p.Claims.Anonymous, p.Claims.ImpersonatedBy, p.Claims.AuthTime
	case p.IsAdmin():
		c.APIToken = p.TokenID
	}
	now := m.core.Now()
	ttl := time.Duration(m.tokenTTL()) * time.Second
	raw, _, err := m.signer.Issue(c, token.AudFile, now, ttl)
	if err != nil {
		return nil, err
	}
	return &FileToken{Token: raw, ExpiresAt: now.Add(ttl).Unix()}, nil
}

// tokenSubject verifies a file token for stored name and returns the
// principal it stands for as it holds now, with the request's context.
func (m *Files) tokenSubject(ctx context.Context, raw, name string, req engine.RequestInfo) (engine.Principal, *token.Claims, error) {
	c, err := m.signer.Verify(raw, token.AudFile)
	if err != nil {
		return engine.Principal{}, nil, errBadToken
	}
	if c.File != name && c.File != AnyFile {
		return engine.Principal{}, nil, errTokenOtherFile
	}
	p := engine.Principal{Kind: engine.User, ID: c.ID, Collection: c.Collection, Claims: c}
	switch {
	case c.APIToken != "":
		p = engine.Principal{Kind: engine.AdminPrincipal, ID: c.ID, TokenID: c.APIToken}
	case c.Admin:
		p.Kind = engine.AdminPrincipal
	}
	q, err := m.creds.Recheck(ctx, p)
	if err != nil {
		return engine.Principal{}, nil, errBadToken
	}
	q.Request = req
	return q, c, nil
}

// tokenUseCmd spends one-time token JTI, valid until Exp.
type tokenUseCmd struct {
	JTI string `json:"jti"`
	Exp int64  `json:"exp"`
	Now int64  `json:"now"`
}

// spend records the use of a one-time token: errTokenUsed the second
// time, on every node.
func (m *Files) spend(ctx context.Context, c *token.Claims) error {
	var exp int64
	if c.ExpiresAt != nil {
		exp = c.ExpiresAt.Unix()
	}
	_, _, err := m.core.Propose(ctx, cmdTokenUse, tokenUseCmd{JTI: c.RegisteredClaims.ID, Exp: exp, Now: m.core.Now().Unix()})
	return err
}

// applyTokenUse: the token's row is the proof it was used; expired rows
// go (a token past its expiry fails verification before it gets here,
// with the clock leeway of token.ClockLeeway).
func (m *Files) applyTokenUse(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[tokenUseCmd](cmd)
	if err != nil {
		return nil, err
	}
	leeway := int64(token.ClockLeeway / time.Second)
	if _, err := tx.Exec(`DELETE FROM _svc_file_tokens WHERE expires_at < ?`, c.Now-2*leeway); err != nil {
		return nil, err
	}
	res, err := tx.Exec(`INSERT OR IGNORE INTO _svc_file_tokens (jti, expires_at) VALUES (?, ?)`, c.JTI, c.Exp)
	if err != nil {
		return nil, err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return nil, engine.FirstErr(err, errTokenUsed)
	}
	return nil, nil
}
