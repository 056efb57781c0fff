package engine

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"strings"
)

// cursorKey is the order of a keyset walk: one sort column plus id.
type cursorKey struct {
	col     string // SQL column
	idx     int    // position of the column in a row
	desc    bool
	notNull bool // created and updated are never NULL
}

var (
	errCursorSort = Errorf(KindBadRequest, "Keyset pagination (cursor) needs exactly one sort column")
	errCursorBad  = Errorf(KindBadRequest, "Malformed cursor")
)

// cursorKey resolves the sort parameter of a keyset walk: exactly one known
// column (unknown ones are ignored as in any list), or the default order.
func (ci *Coll) cursorKey(sortParam string, admin bool) (*cursorKey, error) {
	keys := ci.sortKeys(sortParam, admin)
	switch len(keys) {
	case 0:
		keys = ci.sortKeys(ci.defaultSort, true)
	case 1:
	default:
		return nil, errCursorSort
	}
	k := keys[0]
	return &cursorKey{col: k.col, idx: ci.rowIndex(k.name), desc: k.desc,
		notNull: k.name == "created" || k.name == "updated"}, nil
}

// rowIndex is where a sortable column sits in a row of selectCols.
func (ci *Coll) rowIndex(name string) int {
	switch name {
	case "id":
		return 0
	case "created":
		return 1
	case "updated":
		return 2
	}
	for i, f := range ci.fields {
		if f.Name == name {
			return 3 + i
		}
	}
	return 0
}

func (k *cursorKey) dir() (string, string) {
	if k.desc {
		return " DESC", " < "
	}
	return " ASC", " > "
}

func (k *cursorKey) orderBy() string {
	d, _ := k.dir()
	if k.col == "id" {
		return "id" + d
	}
	return k.col + d + ", id" + d
}

// token encodes the position after row.
func (k *cursorKey) token(row []any) string {
	b, _ := json.Marshal([]any{row[k.idx], row[0]})
	return base64.RawURLEncoding.EncodeToString(b)
}

// after decodes a token into the condition selecting the rows after it.
// NULLs sort first ascending and last descending, as SQLite orders them.
func (k *cursorKey) after(tok string) (string, []any, error) {
	raw, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		return "", nil, errCursorBad
	}
	var pos []any
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	if err := dec.Decode(&pos); err != nil || len(pos) != 2 || dec.More() {
		return "", nil, errCursorBad
	}
	if rest, _ := io.ReadAll(dec.Buffered()); len(strings.TrimSpace(string(rest))) > 0 {
		return "", nil, errCursorBad
	}
	id, ok := pos[1].(string)
	if !ok {
		return "", nil, errCursorBad
	}
	v := pos[0]
	switch v.(type) {
	case nil, string, float64:
	default:
		return "", nil, errCursorBad
	}
	_, cmp := k.dir()
	if k.col == "id" {
		return "(_r.id" + cmp + "?)", []any{id}, nil
	}
	c := "_r." + k.col
	// A row-value comparison lets SQLite walk the (column, id) index from
	// the cursor on: page 1000 costs what page 1 costs.
	after := "((" + c + ", _r.id)" + cmp + "(?, ?))"
	if k.notNull {
		return after, []any{v, id}, nil
	}
	switch {
	case v == nil && !k.desc:
		return "((" + c + " IS NULL AND _r.id > ?) OR " + c + " IS NOT NULL)", []any{id}, nil
	case v == nil:
		return "(" + c + " IS NULL AND _r.id < ?)", []any{id}, nil
	case !k.desc:
		return after, []any{v, id}, nil
	}
	return "(" + after + " OR " + c + " IS NULL)", []any{v, id}, nil
}
