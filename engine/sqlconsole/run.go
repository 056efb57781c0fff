package sqlconsole

import (
	"context"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	sqlite3 "github.com/mattn/go-sqlite3"

	"svcd/engine"
)

// Run runs one statement for admin p in mode (ModeReadonly on this node's
// replica, ModeSandbox on p's sandbox) with positional parameters and a
// time budget in milliseconds (0: DefaultBudgetMs). A statement that fails
// is a Result with OK false; the error is for a request the console
// refuses outright (not an admin, a bad mode or budget) or cannot serve.
func (c *Console) Run(ctx context.Context, p engine.Principal, mode, query string, params []any, budgetMs int) (*Result, error) {
	if !p.IsAdmin() {
		return nil, errNotAdmin
	}
	budget, err := checkBudget(budgetMs)
	if err != nil {
		return nil, err
	}
	args, err := bindParams(params)
	if err != nil {
		return nil, err
	}
	pol := &policy{mode: mode, secrets: secretColumns(c.core)}
	switch mode {
	case ModeReadonly:
		res := &Result{Mode: mode, Node: c.nodeID()}
		err := withConn(ctx, readonlyDSN(c.core.Store().Path()), pol, func(sc *sqlite3.SQLiteConn) error {
			return execute(ctx, sc, pol, query, args, budget, res)
		})
		return res, err
	case ModeSandbox:
		if p.ID == "" {
			return nil, errNoAccount
		}
		return c.runSandbox(ctx, p.ID, pol, query, args, budget)
	}
	return nil, engine.FieldError("mode", "Must be readonly or sandbox")
}

// checkBudget validates a budget in milliseconds.
func checkBudget(ms int) (time.Duration, error) {
	if ms == 0 {
		ms = DefaultBudgetMs
	}
	if ms < MinBudgetMs || ms > MaxBudgetMs {
		return 0, engine.FieldError("timeoutMs", fmt.Sprintf("Must be between %d and %d milliseconds", MinBudgetMs, MaxBudgetMs))
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// bindParams turns JSON values into SQLite values: integral numbers as
// integers, booleans as 1 and 0, objects and arrays as their JSON text.
func bindParams(params []any) ([]driver.NamedValue, error) {
	out := make([]driver.NamedValue, len(params))
	for i, v := range params {
		switch x := v.(type) {
		case json.Number:
			if n, err := x.Int64(); err == nil {
				v = n
			} else if f, err := x.Float64(); err == nil {
				v = f
			} else {
				return nil, engine.FieldError("params", "Parameter "+strconv.Itoa(i+1)+" is not a number SQLite can hold")
			}
		case float64:
			if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
				v = int64(x)
			}
		case bool:
			v = int64(0)
			if x {
				v = int64(1)
			}
		case nil, string, int64, int:
		default:
			b, err := json.Marshal(x)
			if err != nil {
				return nil, engine.FieldError("params", "Parameter "+strconv.Itoa(i+1)+" cannot be bound")
			}
			v = string(b)
		}
		out[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
	}
	return out, nil
}

// execute prepares query on sc under pol, refuses what the mode does not
// allow, and runs it within budget, filling res.
func execute(ctx context.Context, sc *sqlite3.SQLiteConn, pol *policy, query string, args []driver.NamedValue, budget time.Duration, res *Result) error {
	started := time.Now()
	defer func() { res.DurationMs = time.Since(started).Milliseconds() }()
	if strings.Trim(query, " \t\r\n;") == "" {
		res.failed(CodeSyntax, "The statement is empty")
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	ds, err := sc.PrepareContext(ctx, query)
	if err != nil {
		classify(ctx, pol, err, budget, res)
		return nil
	}
	defer ds.Close()
	st, ok := ds.(*sqlite3.SQLiteStmt)
	if !ok {
		return fmt.Errorf("sqlconsole: statement is %T", ds)
	}
	if tail(st) != "" {
		res.failed(CodeSyntax, "Run one statement at a time (text follows the first statement)")
		return nil
	}
	if pol.mode == ModeReadonly && !st.Readonly() {
		// SQLite says the statement writes (VACUUM, for one, asks the
		// authorizer nothing).
		res.failed(CodeReadonly, "The statement may change the database; readonly mode runs statements that only read")
		return nil
	}
	if n := st.NumInput(); n != len(args) {
		res.failed(CodeSQLError, fmt.Sprintf("The statement takes %d parameters; %d given", n, len(args)))
		return nil
	}
	rows, err := st.QueryContext(ctx, args)
	if err != nil {
		classify(ctx, pol, err, budget, res)
		return nil
	}
	defer rows.Close()
	res.Columns = rows.Columns()
	if res.Columns == nil {
		res.Columns = []string{}
	}
	res.Rows = [][]any{}
	vals := make([]driver.Value, len(res.Columns))
	for {
		err := rows.Next(vals)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			classify(ctx, pol, err, budget, res)
			return nil
		}
		if len(res.Rows) == MaxRows {
			res.Truncated = true
			break
		}
		row := make([]any, len(vals))
		for i, v := range vals {
			row[i] = jsonValue(v)
		}
		res.Rows = append(res.Rows, row)
	}
	res.OK, res.RowCount = true, len(res.Rows)
	return nil
}

// jsonValue makes a SQLite value encodable: infinities (which JSON has
// not) as text.
func jsonValue(v driver.Value) any {
	if f, ok := v.(float64); ok && (math.IsInf(f, 0) || math.IsNaN(f)) {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return v
}

// classify turns a failure of SQLite into res's code: the authorizer's
// own refusal first, then the budget, then what SQLite said.
func classify(ctx context.Context, pol *policy, err error, budget time.Duration, res *Result) {
	msg := err.Error()
	var se sqlite3.Error
	isSQLite := errors.As(err, &se)
	switch {
	case pol.refusal != nil:
		res.failed(pol.refusal.code, pol.refusal.msg)
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || (isSQLite && se.Code == sqlite3.ErrInterrupt):
		res.failed(CodeTimeout, fmt.Sprintf("The statement ran past its budget of %d ms and was interrupted", budget.Milliseconds()))
	case isSQLite && se.Code == sqlite3.ErrReadonly:
		res.failed(CodeReadonly, "The statement may change the database; readonly mode runs statements that only read")
	case strings.Contains(msg, "syntax error") || strings.Contains(msg, "incomplete input") || strings.Contains(msg, "unrecognized token"):
		res.failed(CodeSyntax, msg)
	default:
		res.failed(CodeSQLError, msg)
	}
}
