package mcp

import (
	"context"

	"github.com/google/jsonschema-go/jsonschema"

	"svcd/engine"
)

// MaxSQLRows caps the rows run_sql answers (SPEC.md).
const MaxSQLRows = 100

// sqlTool (mcp:sql) runs SQL through the SQL console (engine/sqlconsole):
// read-only on the local replica unless allow_write, which proposes the
// statement through the log (the console refuses non-deterministic
// functions); dry_run answers the query plan. The SQL runner's role
// (developer) applies to the token's admin.
func (s *Server) sqlTool() *Tool {
	return &Tool{
		Name: ToolPrefix + "run_sql", Title: "Run SQL",
		Description: "Run one SQLite statement on the node's database. Read-only unless allow_write is true " +
			"(a write goes through the Raft log as one command on every node; random() and datetime('now') are refused). " +
			"dry_run answers EXPLAIN QUERY PLAN. At most 100 rows (truncated: true when cut). Record tables are named after their collections.",
		Scope: ScopeSQL,
		Input: closed(map[string]*jsonschema.Schema{
			"sql":         str("one SQL statement"),
			"params":      {Type: "array", Description: "positional parameters for ? placeholders"},
			"allow_write": boolean("allow a statement that writes (needs mcp:sql and a writable connection)"),
			"dry_run":     boolean("answer the query plan instead of running"),
		}, "sql"),
		run: s.runSQL,
	}
}

func (s *Server) runSQL(ctx context.Context, c Caller, args map[string]any) (any, error) {
	if c.Principal.Role < engine.RoleDeveloper {
		return nil, toolErrorf("run_sql needs the developer role (the SQL runner's)")
	}
	if s.opts.SQL == nil {
		return nil, toolErrorf("not available: the SQL console is not part of this build yet, so run_sql cannot run")
	}
	sql := argString(args, "sql")
	params, _ := args["params"].([]any)
	write, _ := args["allow_write"].(bool)
	dry, _ := args["dry_run"].(bool)
	p := c.Principal
	var (
		res *SQLResult
		err error
	)
	switch {
	case dry:
		res, err = s.opts.SQL.Plan(ctx, p, sql, params)
	case write && c.ReadOnly:
		return nil, toolErrorf("allow_write is refused: this connection is read-only")
	case write:
		res, err = s.opts.SQL.Write(ctx, p, sql, params)
	default:
		res, err = s.opts.SQL.Read(ctx, p, sql, params, MaxSQLRows)
	}
	if err != nil {
		return nil, toolErrorf("%v", err)
	}
	if res != nil && !res.OK {
		return nil, &toolError{msg: res.ErrorCode + ": " + res.Error, payload: res}
	}
	return res, nil
}
