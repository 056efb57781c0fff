package engine

import (
	"context"
	"errors"
	"regexp"
	"strings"

	"svcd/engine/schema"
	"svcd/fsm"
)

// Index is a managed index of a collection: `idx_<collection>_<field>` or,
// when unique, `uniq_<collection>_<field>` (SPEC.md: only indexes with
// these prefixes are managed through the API).
type Index struct {
	Name   string `json:"name"`
	Field  string `json:"field"`
	Unique bool   `json:"unique"`
}

type indexCreateCmd struct {
	Coll   string `json:"coll"`
	Ver    int64  `json:"ver"`
	Field  string `json:"field"`
	Name   string `json:"name"`
	Unique bool   `json:"unique"`
}

type indexDeleteCmd struct {
	Coll string `json:"coll"`
	Ver  int64  `json:"ver"`
	Name string `json:"name"`
}

var managedIndexName = regexp.MustCompile(`^(idx|uniq)_[A-Za-z0-9_]{1,120}$`)

// Indexes lists the managed indexes of a collection.
func (sc *Schema) Indexes(ctx context.Context, name string) ([]Index, error) {
	ci := sc.e.Coll(name)
	if ci == nil {
		return nil, ErrNotFound
	}
	out := []Index{}
	err := sc.e.store.View(ctx, func(r *fsm.Reader) error {
		rows, err := r.Query(`SELECT name, sql FROM sqlite_schema WHERE type = 'index' AND tbl_name = ? COLLATE NOCASE AND (name LIKE 'idx\_%' ESCAPE '\' OR name LIKE 'uniq\_%' ESCAPE '\') ORDER BY name`, ci.Name)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var n, sqlText string
			if err := rows.Scan(&n, &sqlText); err != nil {
				return err
			}
			ix := Index{Name: n, Unique: strings.HasPrefix(strings.ToUpper(sqlText), "CREATE UNIQUE")}
			if i, j := strings.LastIndex(sqlText, "(\""), strings.LastIndex(sqlText, "\")"); i >= 0 && j > i {
				ix.Field = strings.ReplaceAll(sqlText[i+2:j], `""`, `"`)
			}
			out = append(out, ix)
		}
		return rows.Err()
	})
	return out, err
}

// CreateIndex adds an index on one field.
func (sc *Schema) CreateIndex(ctx context.Context, name, field string, unique bool) (*Index, uint64, error) {
	for attempt := 0; ; attempt++ {
		ci := sc.e.Coll(name)
		if ci == nil {
			return nil, 0, ErrNotFound
		}
		if ci.Type == schema.TypeView {
			return nil, 0, FieldError("collection", "view collections cannot be indexed")
		}
		if field != "id" && field != "created" && field != "updated" {
			f := ci.fieldByName(field)
			if f == nil || f.private || f.Type == schema.FieldVector {
				return nil, 0, FieldError("field", "unknown or unindexable field")
			}
		}
		prefix := "idx_"
		if unique {
			prefix = "uniq_"
		}
		ixName := prefix + ci.Name + "_" + field
		if !managedIndexName.MatchString(ixName) {
			return nil, 0, FieldError("field", "index name would be too long")
		}
		_, idx, err := sc.e.Propose(ctx, cmdIndexCreate, indexCreateCmd{Coll: ci.ID, Ver: ci.Version, Field: field, Name: ixName, Unique: unique})
		if errors.Is(err, ErrSchemaMoved) && attempt < 3 {
			continue
		}
		if err != nil {
			return nil, idx, err
		}
		return &Index{Name: ixName, Field: field, Unique: unique}, idx, nil
	}
}

// DeleteIndex drops a managed index.
func (sc *Schema) DeleteIndex(ctx context.Context, name, ixName string) (uint64, error) {
	ci := sc.e.Coll(name)
	if ci == nil {
		return 0, ErrNotFound
	}
	if !managedIndexName.MatchString(ixName) {
		return 0, Errorf(KindNotFound, "Only indexes named idx_... or uniq_... are managed")
	}
	_, idx, err := sc.e.Propose(ctx, cmdIndexDelete, indexDeleteCmd{Coll: ci.ID, Ver: ci.Version, Name: ixName})
	return idx, err
}

func (sc *Schema) applyIndexCreate(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := decodeCmd[indexCreateCmd](cmd)
	if err != nil {
		return nil, err
	}
	ci, err := sc.e.CollForApply(tx, c.Coll, c.Ver)
	if err != nil {
		return nil, err
	}
	kind := "INDEX "
	if c.Unique {
		kind = "UNIQUE INDEX "
	}
	_, err = tx.ExecDirect("CREATE " + kind + quoteIdent(c.Name) + " ON " + ci.table + " (" + quoteIdent(c.Field) + ")")
	switch {
	case isUniqueViolation(err):
		return nil, FieldError("field", "has duplicate values")
	case err != nil && strings.Contains(err.Error(), "already exists"):
		return nil, &Error{Kind: KindConflict, Message: "The index already exists"}
	}
	return nil, err
}

func (sc *Schema) applyIndexDelete(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := decodeCmd[indexDeleteCmd](cmd)
	if err != nil {
		return nil, err
	}
	ci, err := sc.e.CollForApply(tx, c.Coll, c.Ver)
	if err != nil {
		return nil, err
	}
	var n int
	if err := tx.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name = ? AND tbl_name = ? COLLATE NOCASE`, c.Name, ci.Name).Scan(&n); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, ErrNotFound
	}
	_, err = tx.ExecDirect("DROP INDEX " + quoteIdent(c.Name))
	return nil, err
}
