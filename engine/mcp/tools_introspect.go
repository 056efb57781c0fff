package mcp

import (
	"context"
	"net/url"
	"regexp"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"svcd/engine"
)

// introspectionTools (mcp:read) show the schema, the request log and the
// audit log. They read the control plane as the token's admin: the role
// table decides (a viewer may read schema and audit; logs are any admin's).
func (s *Server) introspectionTools() []*Tool {
	return []*Tool{{
		Name: ToolPrefix + "list_collections", Title: "List collections",
		Description: "Every collection: name, type, fields (name, type, options), rules (null = admins only, \"\" = everyone, else a filter).",
		Scope:       ScopeRead, ReadOnly: true, Input: closed(nil),
		run: func(ctx context.Context, c Caller, _ map[string]any) (any, error) {
			return s.rest(ctx, c.controlPrincipal(), Call{Method: "GET", Path: "/admin/collections"})
		},
	}, {
		Name: ToolPrefix + "describe_collection", Title: "Describe a collection",
		Description: "One collection's full definition, with its rules and any rule that no longer compiles.",
		Scope:       ScopeRead, ReadOnly: true,
		Input: closed(map[string]*jsonschema.Schema{"name": str("collection name or id")}, "name"),
		run: func(ctx context.Context, c Caller, args map[string]any) (any, error) {
			return s.rest(ctx, c.controlPrincipal(), Call{Method: "GET", Path: "/admin/collections/" + url.PathEscape(argString(args, "name"))})
		},
	}, {
		Name: ToolPrefix + "read_logs", Title: "Read request logs",
		Description: "The node's JSONL request log of one UTC day (default today), newest lines last.",
		Scope:       ScopeRead, ReadOnly: true,
		Input: closed(map[string]*jsonschema.Schema{
			"date":  {Type: "string", Pattern: `^\d{4}-\d{2}-\d{2}$`, Description: "UTC day, YYYY-MM-DD"},
			"limit": integer("lines to return (default 100)", 1, 1000),
		}),
		run: func(_ context.Context, c Caller, args map[string]any) (any, error) {
			limit := 100
			if n, ok := args["limit"].(float64); ok {
				limit = int(n)
			}
			return s.readLogs(c, argString(args, "date"), limit)
		},
	}, {
		Name: ToolPrefix + "read_audit_log", Title: "Read the audit log",
		Description: "Admin actions, newest first: who changed what on the control plane.",
		Scope:       ScopeRead, ReadOnly: true,
		Input: closed(map[string]*jsonschema.Schema{
			"page":         integer("page, from 1", 1),
			"perPage":      integer("entries per page (at most 500)", 1, 500),
			"actorId":      str("only this admin's actions"),
			"actionPrefix": str("only actions starting so, e.g. collections."),
			"from":         integer("unix seconds", 0),
			"to":           integer("unix seconds", 0),
		}),
		run: func(ctx context.Context, c Caller, args map[string]any) (any, error) {
			return s.rest(ctx, c.controlPrincipal(), Call{Method: "GET", Path: "/admin/audit-log",
				Query: query(args, "page", "perPage", "actorId", "actionPrefix", "from", "to")})
		},
	}}
}

var dayPattern = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)

// readLogs reads one day of the request log; any admin role may.
func (s *Server) readLogs(c Caller, date string, limit int) (any, error) {
	if c.Principal.Role < engine.RoleViewer {
		return nil, toolErrorf("reading logs needs an admin role")
	}
	if date == "" {
		date = time.Now().UTC().Format("2006-01-02")
	}
	if !dayPattern.MatchString(date) {
		return nil, toolErrorf("date must be YYYY-MM-DD")
	}
	if s.opts.Logs == nil {
		return nil, toolErrorf("not available: this node keeps no request log files yet (read_logs answers once the logs module is wired)")
	}
	lines, err := s.opts.Logs.ReadLogs(date, limit)
	if err != nil {
		return nil, toolErrorf("read logs: %v", err)
	}
	return map[string]any{"date": date, "lines": lines}, nil
}
