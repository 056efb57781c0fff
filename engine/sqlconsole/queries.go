package sqlconsole

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"

	"svcd/engine"
	"svcd/fsm"
)

// Query is a saved query (CONTRACT.md's shape). Only its owner sees,
// runs, changes or deletes it.
type Query struct {
	ID      string          `json:"id"`
	Name    string          `json:"name"`
	SQL     string          `json:"sql"`
	Mode    string          `json:"mode"`
	Params  json.RawMessage `json:"params"`
	OwnerID string          `json:"owner_id"`
	Created int64           `json:"created"`
	Updated int64           `json:"updated"`
}

// Sizes a saved query may have.
const (
	maxNameChars = 200
	maxSQLBytes  = 100_000
)

// queryBody is the body of a create or a PATCH (absent members keep
// their value on PATCH).
type queryBody struct {
	Name   *string         `json:"name"`
	SQL    *string         `json:"sql"`
	Mode   *string         `json:"mode"`
	Params json.RawMessage `json:"params"`
}

// ListQueries is p's saved queries, by name.
func (c *Console) ListQueries(ctx context.Context, p engine.Principal) ([]*Query, error) {
	if p.ID == "" || !p.IsAdmin() {
		return nil, errNoAccount
	}
	out := []*Query{}
	err := c.core.Store().View(ctx, func(r *fsm.Reader) error {
		rows, err := r.Query(`SELECT `+queryCols+` FROM _svc_sql_queries WHERE owner_id = ? ORDER BY name, id`, p.ID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			q, err := scanQuery(rows.Scan)
			if err != nil {
				return err
			}
			out = append(out, q)
		}
		return rows.Err()
	})
	return out, err
}

const queryCols = `id, owner_id, name, sql, mode, params, created, updated`

func scanQuery(scan func(...any) error) (*Query, error) {
	var q Query
	var params string
	if err := scan(&q.ID, &q.OwnerID, &q.Name, &q.SQL, &q.Mode, &params, &q.Created, &q.Updated); err != nil {
		return nil, err
	}
	q.Params = json.RawMessage(params)
	return &q, nil
}

// query reads saved query id as this replica has it, for p (its owner).
func (c *Console) query(ctx context.Context, p engine.Principal, id string) (*Query, error) {
	if p.ID == "" || !p.IsAdmin() {
		return nil, errNoAccount
	}
	var q *Query
	err := c.core.Store().View(ctx, func(r *fsm.Reader) error {
		var err error
		q, err = scanQuery(r.QueryRow(`SELECT `+queryCols+` FROM _svc_sql_queries WHERE id = ?`, id).Scan)
		return err
	})
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, errQueryNotFound
	case err != nil:
		return nil, err
	case q.OwnerID != p.ID:
		return nil, errNotOwner
	}
	return q, nil
}

// CreateQuery saves a query ({name, sql, mode?, params?}) owned by p.
func (c *Console) CreateQuery(ctx context.Context, p engine.Principal, body []byte) (*Query, uint64, error) {
	if p.ID == "" || !p.IsAdmin() {
		return nil, 0, errNoAccount
	}
	now := c.core.Now().Unix()
	q := &Query{ID: "sql_" + engine.NewID(), OwnerID: p.ID, Mode: ModeReadonly, Params: json.RawMessage("[]"), Created: now, Updated: now}
	if err := q.merge(body, true); err != nil {
		return nil, 0, err
	}
	return c.save(ctx, q, true)
}

// PatchQuery changes p's saved query id.
func (c *Console) PatchQuery(ctx context.Context, p engine.Principal, id string, body []byte) (*Query, uint64, error) {
	q, err := c.query(ctx, p, id)
	if err != nil {
		return nil, 0, err
	}
	if err := q.merge(body, false); err != nil {
		return nil, 0, err
	}
	q.Updated = max(c.core.Now().Unix(), q.Updated+1)
	return c.save(ctx, q, false)
}

func (c *Console) save(ctx context.Context, q *Query, create bool) (*Query, uint64, error) {
	v, idx, err := c.core.Propose(ctx, cmdQuerySave, saveCmd{Q: *q, Create: create})
	if err != nil {
		return nil, idx, err
	}
	saved, _ := v.(*Query)
	if saved == nil {
		saved = q
	}
	return saved, idx, nil
}

// DeleteQuery deletes p's saved query id.
func (c *Console) DeleteQuery(ctx context.Context, p engine.Principal, id string) (uint64, error) {
	if p.ID == "" || !p.IsAdmin() {
		return 0, errNoAccount
	}
	_, idx, err := c.core.Propose(ctx, cmdQueryDelete, deleteCmd{ID: id, Owner: p.ID})
	return idx, err
}

// RunQuery runs p's saved query id in its mode, with params (nil: the
// saved ones) and budget in milliseconds (0: the default).
func (c *Console) RunQuery(ctx context.Context, p engine.Principal, id string, params []any, budgetMs int) (*Result, error) {
	q, err := c.query(ctx, p, id)
	if err != nil {
		return nil, err
	}
	if params == nil {
		d := json.NewDecoder(bytes.NewReader(q.Params))
		d.UseNumber()
		if err := d.Decode(&params); err != nil {
			return nil, err
		}
	}
	return c.Run(ctx, p, q.Mode, q.SQL, params, budgetMs)
}

// merge applies body to q, checking every member; create requires name
// and sql.
func (q *Query) merge(body []byte, create bool) error {
	var b queryBody
	if err := json.Unmarshal(body, &b); err != nil {
		return engine.Errorf(engine.KindBadRequest, "The body must be a JSON object")
	}
	details := map[string]string{}
	if b.Name != nil {
		q.Name = strings.TrimSpace(*b.Name)
	}
	if b.SQL != nil {
		q.SQL = *b.SQL
	}
	if b.Mode != nil {
		q.Mode = *b.Mode
	}
	if len(b.Params) > 0 && string(b.Params) != "null" {
		var arr []any
		if json.Unmarshal(b.Params, &arr) != nil {
			details["params"] = "Must be an array of values"
		} else {
			q.Params = append(json.RawMessage(nil), b.Params...)
		}
	}
	if (create || b.Name != nil) && (q.Name == "" || utf8.RuneCountInString(q.Name) > maxNameChars) {
		details["name"] = "Must be 1 to 200 characters"
	}
	if (create || b.SQL != nil) && (strings.TrimSpace(q.SQL) == "" || len(q.SQL) > maxSQLBytes) {
		details["sql"] = "Must be a statement of at most 100000 bytes"
	}
	if q.Mode != ModeReadonly && q.Mode != ModeSandbox {
		details["mode"] = "Must be readonly or sandbox"
	}
	if len(details) > 0 {
		return engine.ValidationError(details)
	}
	return nil
}
