package pbimport

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"svcd/engine"
	"svcd/engine/auth/oauth2"
	"svcd/engine/schema"
	"svcd/fsm"
)

// LinkRow is another system's OAuth2 link to import (a row of
// PocketBase's _externalAuths): the account it belongs to, the provider
// and the account's id there (the subject), and when it was made (Unix
// seconds).
type LinkRow struct {
	UserID   string `json:"user_id"`
	Provider string `json:"provider"`
	Subject  string `json:"subject"`
	Created  int64  `json:"created"`
}

// key names a link in an answer: USER_ID/PROVIDER.
func (l LinkRow) key() string { return l.UserID + "/" + l.Provider }

// linksCmd is command 162's payload: links of one auth collection.
type linksCmd struct {
	Coll  string      `json:"coll"`
	Ver   int64       `json:"ver"`
	Links []LinkRow   `json:"links"`
	Pre   []RowFailed `json:"pre,omitempty"`
}

// oauth2LinksVersion is the internal schema version whose migration
// (engine/auth) made the links table.
const oauth2LinksVersion = 14

// ImportOAuth2Links links accounts of the auth collection coll to their
// provider identities, in one command, as engine/auth's sign-in would
// have: a link that exists (same account, provider and subject) is left
// and listed as skipped; one whose provider svcd does not know, whose
// account does not exist, or whose identity or provider is already
// linked otherwise fails alone. The answer names links USER_ID/PROVIDER.
func (m *Import) ImportOAuth2Links(ctx context.Context, _ engine.Principal, coll string, links []LinkRow) (*Result, uint64, error) {
	if len(links) == 0 || len(links) > MaxRows {
		return nil, 0, engine.ValidationError(map[string]string{"links": fmt.Sprintf("must hold 1 to %d links", MaxRows)})
	}
	ci := m.core.Coll(coll)
	if ci == nil {
		return nil, 0, engine.ErrNotFound
	}
	if ci.Type != schema.TypeAuth {
		return nil, 0, engine.FieldError("collection", "is not an auth collection")
	}
	if m.core.InternalVersion() < oauth2LinksVersion {
		return nil, 0, &engine.Error{Kind: engine.KindUnavailable, Message: "OAuth2 is not available on this node", RetryAfter: 5}
	}
	known := map[string]bool{}
	for _, p := range oauth2.All() {
		known[p.Name] = true
	}
	cmd := linksCmd{Coll: ci.ID, Ver: ci.Version}
	seen := map[string]bool{}
	now := m.core.Now().Unix()
	for _, l := range links {
		fail := func(field, msg string) {
			cmd.Pre = append(cmd.Pre, RowFailed{ID: l.key(), Error: "Validation failed", Details: map[string]any{field: msg}})
		}
		switch {
		case l.UserID == "" || l.Subject == "":
			fail("user_id", "user_id and subject are required")
		case !known[l.Provider]:
			fail("provider", "is not a known provider")
		case seen[l.key()]:
			fail("provider", "is given twice for this account")
		default:
			seen[l.key()] = true
			if l.Created <= 0 {
				l.Created = now
			}
			cmd.Links = append(cmd.Links, l)
		}
	}
	if len(cmd.Links) == 0 {
		return &Result{Created: []string{}, Skipped: []string{}, Failed: cmd.Pre}, 0, nil
	}
	res, idx, err := m.core.Propose(ctx, cmdLinks, cmd)
	if err != nil {
		return nil, idx, err
	}
	return res.(*Result), idx, nil
}

// applyLinks writes each link whose account exists and whose identity
// and (account, provider) pair are free; the link's email is the
// account's.
func (m *Import) applyLinks(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[linksCmd](cmd)
	if err != nil {
		return nil, err
	}
	if v, err := engine.InternalVersionTx(tx); err != nil || v < oauth2LinksVersion {
		return nil, engine.FirstErr(err, &engine.Error{Kind: engine.KindUnavailable, Message: "OAuth2 is not available on this node", RetryAfter: 5})
	}
	ci, err := m.core.CollForApply(tx, c.Coll, c.Ver)
	if err != nil {
		return nil, err
	}
	out := &Result{Created: []string{}, Skipped: []string{}, Failed: append([]RowFailed{}, c.Pre...)}
	for _, l := range c.Links {
		fail := func(field, msg string) {
			out.Failed = append(out.Failed, RowFailed{ID: l.key(), Error: "Validation failed", Details: map[string]any{field: msg}})
		}
		var email string
		err := tx.QueryRow("SELECT email FROM "+ci.Table()+" WHERE id = ?", l.UserID).Scan(&email)
		if errors.Is(err, sql.ErrNoRows) {
			fail("user_id", "no such record")
			continue
		}
		if err != nil {
			return nil, err
		}
		var owner string
		err = tx.QueryRow(`SELECT user_id FROM _svc_oauth2_links WHERE coll = ? AND provider = ? AND subject = ?`,
			c.Coll, l.Provider, l.Subject).Scan(&owner)
		switch {
		case err == nil && owner == l.UserID:
			out.Skipped = append(out.Skipped, l.key())
			continue
		case err == nil:
			fail("subject", "this identity is linked to another account")
			continue
		case !errors.Is(err, sql.ErrNoRows):
			return nil, err
		}
		var n int
		if err := tx.QueryRow(`SELECT count(*) FROM _svc_oauth2_links WHERE coll = ? AND user_id = ? AND provider = ?`,
			c.Coll, l.UserID, l.Provider).Scan(&n); err != nil {
			return nil, err
		}
		if n > 0 {
			fail("provider", "the account is linked to another identity of this provider")
			continue
		}
		if _, err := tx.Exec(`INSERT INTO _svc_oauth2_links (coll, provider, subject, user_id, email, created, last_used)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, c.Coll, l.Provider, l.Subject, l.UserID, email, l.Created, l.Created); err != nil {
			return nil, err
		}
		out.Created = append(out.Created, l.key())
	}
	return out, nil
}
