package stack

import (
	"context"
	"encoding/json"

	"svcd/engine"
	"svcd/engine/mcp"
	"svcd/engine/sqlconsole"
	"svcd/internal/logfile"
)

// mcpLogs is the agent protocol's read_logs and svc://logs/{date} over
// the node's log folder: the last lines of one UTC day, oldest first.
type mcpLogs struct{ d *logfile.Dir }

var _ mcp.LogReader = mcpLogs{}

func (m mcpLogs) ReadLogs(date string, limit int) ([]json.RawMessage, error) {
	return m.d.ReadLogs(date, limit)
}

// mcpSQL is the agent protocol's run_sql over the SQL console: reads on a
// read-only connection of this replica (capped at the tool's row limit),
// plans with EXPLAIN QUERY PLAN, writes through the log.
type mcpSQL struct{ c *sqlconsole.Console }

var _ mcp.SQLRunner = mcpSQL{}

func (m mcpSQL) Read(ctx context.Context, p engine.Principal, query string, params []any, maxRows int) (*mcp.SQLResult, error) {
	res, err := m.c.Run(ctx, p, sqlconsole.ModeReadonly, query, params, 0)
	if err != nil {
		return nil, err
	}
	out := sqlResult(res)
	if len(out.Rows) > maxRows {
		out.Rows, out.RowCount, out.Truncated = out.Rows[:maxRows], maxRows, true
	}
	return out, nil
}

func (m mcpSQL) Plan(ctx context.Context, p engine.Principal, query string, params []any) (*mcp.SQLResult, error) {
	res, err := m.c.Run(ctx, p, sqlconsole.ModeReadonly, "EXPLAIN QUERY PLAN "+query, params, 0)
	if err != nil {
		return nil, err
	}
	return sqlResult(res), nil
}

func (m mcpSQL) Write(ctx context.Context, p engine.Principal, query string, params []any) (*mcp.SQLResult, error) {
	res, _, err := m.c.Write(ctx, p, query, params)
	if err != nil {
		return nil, err
	}
	return sqlResult(res), nil
}

func sqlResult(r *sqlconsole.Result) *mcp.SQLResult {
	return &mcp.SQLResult{OK: r.OK, Columns: r.Columns, Rows: r.Rows, RowCount: r.RowCount, Truncated: r.Truncated,
		DurationMs: r.DurationMs, Changes: r.Changes, ErrorCode: r.ErrorCode, Error: r.Error}
}
