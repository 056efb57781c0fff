package pbimport

import (
	"context"
	"fmt"
	"strings"

	"svcd/engine"
	"svcd/engine/schema"
)

// Row is one record to import: its id, its times (Unix seconds; Updated
// 0 means Created), its field values as a client would send them, and in
// an auth collection the password hash to keep (empty: none).
type Row struct {
	ID           string         `json:"id"`
	Created      int64          `json:"created"`
	Updated      int64          `json:"updated"`
	Values       map[string]any `json:"values"`
	PasswordHash string         `json:"password_hash,omitempty"`
}

// Result is what an import of rows did: the ids it created, those it
// left because they exist, and the rows that failed with their reasons.
type Result struct {
	Created []string    `json:"created"`
	Skipped []string    `json:"skipped"`
	Failed  []RowFailed `json:"failed"`
}

// RowFailed is a row that was not imported.
type RowFailed struct {
	ID      string         `json:"id"`
	Error   string         `json:"error"`
	Details map[string]any `json:"details,omitempty"`
}

// rowsCmd is command 160's payload.
type rowsCmd struct {
	Coll string      `json:"coll"`
	Ver  int64       `json:"ver"`
	Rows []cmdRow    `json:"rows"`
	Pre  []RowFailed `json:"pre,omitempty"` // rows refused before proposing, kept for the answer
}

type cmdRow struct {
	Create  engine.RecordCreate `json:"create"`
	Updated int64               `json:"updated"`
}

// bcryptPrefixes are the hash forms an imported password may have.
var bcryptPrefixes = []string{"$2a$", "$2b$", "$2y$", "$argon2id$"}

// ImportRows imports rows into collection coll as admin p (the owner the
// route checked), in one command: at most MaxRows of them. Rows that do
// not validate fail alone, before the command.
func (m *Import) ImportRows(ctx context.Context, p engine.Principal, coll string, rows []Row) (*Result, uint64, error) {
	if len(rows) == 0 || len(rows) > MaxRows {
		return nil, 0, engine.ValidationError(map[string]string{"rows": fmt.Sprintf("must hold 1 to %d rows", MaxRows)})
	}
	ci := m.core.Coll(coll)
	if ci == nil {
		return nil, 0, engine.ErrNotFound
	}
	if ci.Type == schema.TypeView {
		return nil, 0, engine.ValidationError(map[string]string{"collection": "is a view: its rows come from its query"})
	}
	cmd := rowsCmd{Coll: ci.ID, Ver: ci.Version}
	seen := map[string]bool{}
	for _, r := range rows {
		f := m.prepare(p, ci, r, seen)
		if f.create != nil {
			cmd.Rows = append(cmd.Rows, cmdRow{Create: *f.create, Updated: f.updated})
		} else {
			cmd.Pre = append(cmd.Pre, f.failed)
		}
	}
	if len(cmd.Rows) == 0 {
		return &Result{Created: []string{}, Skipped: []string{}, Failed: cmd.Pre}, 0, nil
	}
	res, idx, err := m.core.Propose(ctx, cmdRows, cmd)
	if err != nil {
		return nil, idx, err
	}
	return res.(*Result), idx, nil
}

type prepared struct {
	create  *engine.RecordCreate
	updated int64
	failed  RowFailed
}

func (m *Import) prepare(p engine.Principal, ci *engine.Coll, r Row, seen map[string]bool) prepared {
	fail := func(msg string, d map[string]any) prepared {
		return prepared{failed: RowFailed{ID: r.ID, Error: msg, Details: d}}
	}
	if r.ID == "" || seen[r.ID] {
		return fail("Validation failed", map[string]any{"id": "is required and unique within a call"})
	}
	seen[r.ID] = true
	if r.Created <= 0 || r.Updated < 0 || (r.Updated != 0 && r.Updated < r.Created) {
		return fail("Validation failed", map[string]any{"created": "must be a positive Unix time, and updated 0 or not before it"})
	}
	body := map[string]any{"id": r.ID}
	for k, v := range r.Values {
		if k == "id" || k == "created" || k == "updated" || k == "password" {
			continue
		}
		body[k] = v
	}
	var extra map[string]any
	if r.PasswordHash != "" {
		if ci.Type != schema.TypeAuth {
			return fail("Validation failed", map[string]any{"password_hash": "only an auth collection's record has one"})
		}
		if !hasPrefix(r.PasswordHash, bcryptPrefixes) {
			return fail("Validation failed", map[string]any{"password_hash": "must be a bcrypt ($2a$, $2b$, $2y$) or argon2id hash"})
		}
		extra = map[string]any{"password": r.PasswordHash}
	}
	c, err := m.core.Records().PrepareCreate(p, ci, body, extra, r.Created)
	if err != nil {
		if de := engine.AsError(err); de != nil {
			return fail(de.Message, de.Details)
		}
		return fail(err.Error(), nil)
	}
	upd := r.Updated
	if upd == 0 {
		upd = r.Created
	}
	return prepared{create: c, updated: upd}
}

func hasPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
