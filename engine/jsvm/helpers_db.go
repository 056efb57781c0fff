package jsvm

import (
	"fmt"

	"github.com/dop251/goja"

	"svcd/fsm"
)

// helpers.db: read-only SQL on this node's replica, as the SQL runner's
// read-only mode: one read transaction on a connection that refuses
// writes, at most 1000 rows. It reads tables as they are stored: rules
// do not apply (hidden fields, other users' rows and the internal _svc_
// tables are all visible), so code must not hand its rows to a caller
// unfiltered. Writes go through the records helpers, as commands.

func (h *helperSet) data(o *goja.Object) {
	ns := h.namespace(o, "db")
	ns.set("query", func(call goja.FunctionCall) goja.Value {
		rows := h.sql(call, "helpers.db.query")
		return h.inv.b.fromGo(rows)
	})
	ns.set("one", func(call goja.FunctionCall) goja.Value {
		rows := h.sql(call, "helpers.db.one")
		if len(rows) == 0 {
			return goja.Null()
		}
		return h.inv.b.fromGo(rows[0])
	})
}

// sql runs the statement of argument 0 with the parameters that follow
// and returns its rows as objects of column to value.
func (h *helperSet) sql(call goja.FunctionCall, name string) []map[string]any {
	q := h.str(call, 0, name, "the SQL")
	args := make([]any, 0, len(call.Arguments)-1)
	for _, a := range call.Arguments[1:] {
		v, err := h.inv.b.toGo(a)
		if err != nil {
			h.inv.throw(name, err)
		}
		args = append(args, sqlArg(v))
	}
	var out []map[string]any
	size := 0
	err := h.inv.m.core.Store().ViewTx(h.inv.ctx, func(r *fsm.Reader) error {
		rows, err := r.QueryDirect(q, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		cols, err := rows.Columns()
		if err != nil {
			return err
		}
		for rows.Next() {
			if len(out) == maxDBRows {
				return fmt.Errorf("the statement returns more than %d rows (add a LIMIT)", maxDBRows)
			}
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				return err
			}
			row := make(map[string]any, len(cols))
			for i, c := range cols {
				if b, ok := vals[i].([]byte); ok {
					vals[i] = string(b)
				}
				if s, ok := vals[i].(string); ok {
					size += len(s)
				}
				row[c] = vals[i]
			}
			size += 16 * len(cols)
			out = append(out, row)
		}
		return rows.Err()
	})
	if err != nil {
		h.inv.throw(name, err)
	}
	h.inv.charge(name, size)
	if out == nil {
		out = []map[string]any{}
	}
	return out
}

// sqlArg is a parameter as SQLite takes it: numbers as int64 or float64,
// objects and arrays as their JSON text.
func sqlArg(v any) any {
	switch x := v.(type) {
	case interface{ Int64() (int64, error) }:
		if n, err := x.Int64(); err == nil {
			return n
		}
		if f, ok := x.(interface{ Float64() (float64, error) }); ok {
			n, _ := f.Float64()
			return n
		}
	case map[string]any, []any:
		raw, _ := jsonMarshal(x)
		return string(raw)
	}
	return v
}
