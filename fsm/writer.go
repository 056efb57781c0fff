package fsm

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"strconv"

	sqlite3 "github.com/mattn/go-sqlite3"
)

// writer is the one read-write connection, owned by the apply path. It
// speaks to the driver directly: database/sql would need a second
// connection to prepare statements while the batch transaction holds the
// only one, and the apply path wants no pool between it and SQLite.
type writer struct {
	conn  *sqlite3.SQLiteConn
	stmts map[string]driver.Stmt
	// args is exec's scratch slice of driver values: the driver binds
	// them and keeps none once ExecContext returns, so one slice serves
	// every statement of the apply path (a bulk create runs one per row).
	args []driver.NamedValue
}

func openWriter(path string) (*writer, error) {
	dc, err := (&sqlite3.SQLiteDriver{ConnectHook: registerFunctions}).Open(dsn(path, false))
	if err != nil {
		return nil, err
	}
	return &writer{conn: dc.(*sqlite3.SQLiteConn), stmts: map[string]driver.Stmt{}}, nil
}

func (w *writer) close() error {
	w.resetStmts()
	return w.conn.Close()
}

func (w *writer) resetStmts() {
	for q, st := range w.stmts {
		st.Close()
		delete(w.stmts, q)
	}
}

func (w *writer) stmt(query string) (driver.Stmt, error) {
	if st, ok := w.stmts[query]; ok {
		return st, nil
	}
	st, err := w.conn.Prepare(query)
	if err != nil {
		return nil, err
	}
	if len(w.stmts) >= maxCachedStmts {
		w.resetStmts()
	}
	w.stmts[query] = st
	return st, nil
}

// namedArgs converts arguments to driver values, appended to out[:0].
func namedArgs(out []driver.NamedValue, args []any) ([]driver.NamedValue, error) {
	out = out[:0]
	for i, a := range args {
		v, err := driver.DefaultParameterConverter.ConvertValue(a)
		if err != nil {
			return nil, fmt.Errorf("argument %d: %w", i+1, err)
		}
		out = append(out, driver.NamedValue{Ordinal: i + 1, Value: v})
	}
	return out, nil
}

var bg = context.Background()

func (w *writer) exec(cached bool, query string, args []any) (driver.Result, error) {
	nv, err := namedArgs(w.args, args)
	if err != nil {
		return nil, err
	}
	w.args = nv
	defer clear(nv) // hold no record's values past the statement
	if !cached {
		return w.conn.ExecContext(bg, query, nv)
	}
	st, err := w.stmt(query)
	if err != nil {
		return nil, err
	}
	return st.(driver.StmtExecContext).ExecContext(bg, nv)
}

func (w *writer) query(cached bool, query string, args []any) (*Rows, error) {
	nv, err := namedArgs(nil, args)
	if err != nil {
		return nil, err
	}
	var st driver.Stmt
	if cached {
		st, err = w.stmt(query)
	} else {
		st, err = w.conn.Prepare(query)
	}
	if err != nil {
		return nil, err
	}
	rows, err := st.(driver.StmtQueryContext).QueryContext(bg, nv)
	if err != nil {
		if !cached {
			st.Close()
		}
		return nil, err
	}
	r := &Rows{rows: rows, vals: make([]driver.Value, len(rows.Columns()))}
	if !cached {
		r.owned = st
	}
	return r, nil
}

// Rows iterates a result on the writer connection.
type Rows struct {
	rows  driver.Rows
	owned driver.Stmt
	vals  []driver.Value
	err   error
	done  bool
}

// Next advances to the next row.
func (r *Rows) Next() bool {
	if r.done {
		return false
	}
	if err := r.rows.Next(r.vals); err != nil {
		if !errors.Is(err, io.EOF) {
			r.err = err
		}
		r.Close()
		return false
	}
	return true
}

// Scan copies the current row into dest.
func (r *Rows) Scan(dest ...any) error {
	if len(dest) != len(r.vals) {
		return fmt.Errorf("fsm: scan: %d destinations for %d columns", len(dest), len(r.vals))
	}
	for i, d := range dest {
		if err := assign(d, r.vals[i]); err != nil {
			return fmt.Errorf("fsm: scan column %d: %w", i, err)
		}
	}
	return nil
}

// Columns returns the column names.
func (r *Rows) Columns() []string { return r.rows.Columns() }

// Err returns the error that ended the iteration, if any.
func (r *Rows) Err() error { return r.err }

// Close releases the rows. Safe to call twice.
func (r *Rows) Close() error {
	if r.done {
		return nil
	}
	r.done = true
	err := r.rows.Close()
	if r.owned != nil {
		r.owned.Close()
	}
	return err
}

// Row is the result of QueryRow.
type Row struct {
	rows *Rows
	err  error
}

// Scan scans the first row and closes the result; sql.ErrNoRows if empty.
func (r *Row) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	defer r.rows.Close()
	if !r.rows.Next() {
		if r.rows.err != nil {
			return r.rows.err
		}
		return sql.ErrNoRows
	}
	return r.rows.Scan(dest...)
}

// assign stores a driver value into a destination pointer.
func assign(dest any, v driver.Value) error {
	switch d := dest.(type) {
	case *any:
		if b, ok := v.([]byte); ok {
			v = append([]byte(nil), b...)
		}
		*d = v
		return nil
	case *string:
		switch x := v.(type) {
		case string:
			*d = x
		case []byte:
			*d = string(x)
		case int64:
			*d = strconv.FormatInt(x, 10)
		case float64:
			*d = strconv.FormatFloat(x, 'g', -1, 64)
		default:
			return fmt.Errorf("cannot store %T in *string", v)
		}
		return nil
	case *int64:
		n, err := asInt64(v)
		*d = n
		return err
	case *int:
		n, err := asInt64(v)
		*d = int(n)
		return err
	case *uint64:
		n, err := asInt64(v)
		*d = uint64(n)
		return err
	case *float64:
		switch x := v.(type) {
		case float64:
			*d = x
		case int64:
			*d = float64(x)
		default:
			return fmt.Errorf("cannot store %T in *float64", v)
		}
		return nil
	case *bool:
		n, err := asInt64(v)
		*d = n != 0
		return err
	case *[]byte:
		switch x := v.(type) {
		case []byte:
			*d = append([]byte(nil), x...)
		case string:
			*d = []byte(x)
		case nil:
			*d = nil
		default:
			return fmt.Errorf("cannot store %T in *[]byte", v)
		}
		return nil
	}
	return fmt.Errorf("unsupported scan destination %T", dest)
}

func asInt64(v driver.Value) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case float64:
		return int64(x), nil
	case bool:
		if x {
			return 1, nil
		}
		return 0, nil
	case string:
		return strconv.ParseInt(x, 10, 64)
	case []byte:
		return strconv.ParseInt(string(x), 10, 64)
	}
	return 0, fmt.Errorf("cannot convert %T to an integer", v)
}
