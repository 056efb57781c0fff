package sqlconsole

import (
	"context"
	"errors"
	"time"

	sqlite3 "github.com/mattn/go-sqlite3"

	"svcd/engine"
	"svcd/fsm"
)

// A write through the log (the agent protocol's run_sql with allow_write)
// is one data-changing statement proposed as one command (cmdWrite) and
// run by every replica's apply, in the log's transaction. It is checked
// on the proposing node first, by SQLite: the statement is prepared on a
// connection whose authorizer allows only INSERT, UPDATE and DELETE on
// collection tables (no schema change, no PRAGMA, no ATTACH, no
// transaction control, no internal table) and refuses every function
// whose value could differ between replicas (volatileFuncs: random(), the
// date and time functions, changes(), ...), so every replica computes the
// same rows.
//
// What it bypasses, by design: collection rules, field validation, hooks,
// record history, the full-text index, realtime events and webhooks. The
// rows change as SQL says and nothing else is told (docs/sql.md).

// writeCmd is one statement with its parameters, as the proposer bound
// them.
type writeCmd struct {
	SQL    string `json:"sql"`
	Params []any  `json:"params"`
	// Admin is who asked (for the audit trail; the apply does not use it).
	Admin string `json:"admin"`
}

// writeResult is what every replica's apply answers.
type writeResult struct {
	Changes   int64  `json:"changes"`
	ErrorCode string `json:"error_code,omitempty"`
	Error     string `json:"error,omitempty"`
}

// Write runs one data-changing statement on every replica through the
// log, for admin p. A refused or failed statement is a Result with OK
// false; the index is the log entry's (0 when nothing was proposed).
func (c *Console) Write(ctx context.Context, p engine.Principal, query string, params []any) (*Result, uint64, error) {
	if !p.IsAdmin() || p.Role < engine.RoleDeveloper {
		return nil, 0, errNotAdmin
	}
	args, err := bindParams(params)
	if err != nil {
		return nil, 0, err
	}
	started := time.Now()
	res := &Result{Mode: modeWrite, Node: c.nodeID(), Columns: []string{}, Rows: [][]any{}}
	pol := &policy{mode: modeWrite, secrets: secretColumns(c.core)}
	err = withConn(ctx, readonlyDSN(c.core.Store().Path()), pol, func(sc *sqlite3.SQLiteConn) error {
		return checkWrite(ctx, sc, pol, query, len(args), res)
	})
	if err != nil || res.ErrorCode != "" {
		res.DurationMs = time.Since(started).Milliseconds()
		return res, 0, err
	}
	v, idx, err := c.core.Propose(ctx, cmdWrite, writeCmd{SQL: query, Params: params, Admin: p.ID})
	res.DurationMs = time.Since(started).Milliseconds()
	if err != nil {
		return nil, idx, err
	}
	wr, _ := v.(*writeResult)
	if wr == nil {
		return nil, idx, errors.New("sqlconsole: write answered no result")
	}
	if wr.ErrorCode != "" {
		return res.failed(wr.ErrorCode, wr.Error), idx, nil
	}
	res.OK, res.Changes = true, wr.Changes
	return res, idx, nil
}

// checkWrite prepares query under the write policy and refuses what the
// log may not carry.
func checkWrite(ctx context.Context, sc *sqlite3.SQLiteConn, pol *policy, query string, nargs int, res *Result) error {
	ds, err := sc.PrepareContext(ctx, query)
	if err != nil {
		classify(ctx, pol, err, time.Duration(DefaultBudgetMs)*time.Millisecond, res)
		return nil
	}
	defer ds.Close()
	st := ds.(*sqlite3.SQLiteStmt)
	switch {
	case tail(st) != "":
		res.failed(CodeSyntax, "Run one statement at a time (text follows the first statement)")
	case st.Readonly():
		res.failed(CodeSQLError, "The statement changes nothing; run it read only")
	case st.NumInput() != nargs:
		res.failed(CodeSQLError, "The statement's parameters and the values given differ in number")
	}
	return nil
}

// applyWrite runs the statement in the log's transaction. A statement
// that fails changes nothing (SQLite undoes a failed statement) and
// answers its error on every replica alike.
func (c *Console) applyWrite(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	w, err := engine.DecodeCmd[writeCmd](cmd)
	if err != nil {
		return nil, err
	}
	named, err := bindParams(w.Params)
	if err != nil {
		return &writeResult{ErrorCode: CodeSQLError, Error: err.Error()}, nil
	}
	args := make([]any, len(named))
	for i, nv := range named {
		args[i] = nv.Value
	}
	r, err := tx.ExecDirect(w.SQL, args...)
	if err != nil {
		return &writeResult{ErrorCode: CodeSQLError, Error: err.Error()}, nil
	}
	n, _ := r.RowsAffected()
	return &writeResult{Changes: n}, nil
}
