package mcp

import (
	"context"
	"encoding/json"
	"net/url"

	"svcd/engine"
	"svcd/engine/schema"
)

// Backend runs one call of the REST API in-process as principal p: the
// same routes, middleware (role table, scopes, audit, rate limits), rules
// and Raft path as a client's request. The HTTP layer implements it.
type Backend interface {
	Do(ctx context.Context, p engine.Principal, req Call) Reply
}

// Call is one REST call: method, path under /api/v1, query and JSON body.
type Call struct {
	Method string
	Path   string
	Query  url.Values
	Body   any
}

// Reply is the REST answer: status and body (JSON; empty for 204).
type Reply struct {
	Status int
	Body   json.RawMessage
}

// OK reports a 2xx answer.
func (r Reply) OK() bool { return r.Status >= 200 && r.Status < 300 }

// Catalog is what the registry reads of the schema (engine.Schema).
type Catalog interface {
	Collections() []*schema.Collection
}

// SQLRunner is what run_sql needs of the SQL console (engine/sqlconsole).
// Read runs a statement on a read-only connection of the local replica;
// Plan answers EXPLAIN QUERY PLAN; Write proposes the statement through the
// log as one command, applied on every node. maxRows caps the rows read.
type SQLRunner interface {
	Read(ctx context.Context, p engine.Principal, sql string, params []any, maxRows int) (*SQLResult, error)
	Plan(ctx context.Context, p engine.Principal, sql string, params []any) (*SQLResult, error)
	Write(ctx context.Context, p engine.Principal, sql string, params []any) (*SQLResult, error)
}

// SQLResult is a statement's answer, in the SQL runner's shape.
type SQLResult struct {
	OK         bool     `json:"ok"`
	Columns    []string `json:"columns"`
	Rows       [][]any  `json:"rows"`
	RowCount   int      `json:"rowCount"`
	Truncated  bool     `json:"truncated"`
	DurationMs int64    `json:"durationMs"`
	Changes    int64    `json:"changes,omitempty"`
	ErrorCode  string   `json:"errorCode,omitempty"`
	Error      string   `json:"error,omitempty"`
}

// LogReader reads the node's JSONL request log of one UTC day
// (YYYY-MM-DD), the newest limit lines last.
type LogReader interface {
	ReadLogs(date string, limit int) ([]json.RawMessage, error)
}

// EventDispatcher fires a custom webhook event (helpers.webhooks.dispatch).
type EventDispatcher interface {
	DispatchEvent(ctx context.Context, event string, data any) ([]string, uint64, error)
}

// Info describes the node for svc://server/info.
type Info struct {
	Name     string `json:"name"`
	Version  string `json:"version"`
	NodeID   string `json:"node_id"`
	Protocol string `json:"protocol"`
}
