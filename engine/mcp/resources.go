package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
)

// CodeResourceNotFound is the protocol's resource-not-found error.
const CodeResourceNotFound = -32002

type resourceDef struct {
	URI, Name, Title, Description string
	// Scope is the scope that shows it ("" : any mcp scope).
	Scope Scope
}

var resources = []resourceDef{
	{"svc://collections", "collections", "Collections", "Every collection's definition (fields, rules).", ScopeRead},
	{"svc://audit/recent", "audit-recent", "Recent audit log", "The 50 newest admin actions.", ScopeRead},
	{"svc://settings", "settings", "Settings", "Runtime settings, secrets masked (owner role).", ScopeAdmin},
	{"svc://server/info", "server-info", "Server info", "Server name, version, node, protocol revision, the token's scopes.", ""},
}

var templates = []resourceDef{
	{"svc://collection/{name}", "collection", "A collection", "One collection's definition.", ScopeRead},
	{"svc://record/{collection}/{id}", "record", "A record", "One record, read through the collection's rules.", ScopeRead},
	{"svc://logs/{date}", "logs", "Request log of a day", "The node's JSONL request log of one UTC day (YYYY-MM-DD).", ScopeRead},
}

func (c Caller) hasOrAny(s Scope) bool { return s == "" || c.Has(s) }

func (s *Server) listResources(c Caller) any {
	list := []map[string]any{}
	for _, r := range resources {
		if c.hasOrAny(r.Scope) {
			list = append(list, map[string]any{"uri": r.URI, "name": r.Name, "title": r.Title,
				"description": r.Description, "mimeType": "application/json"})
		}
	}
	return map[string]any{"resources": list}
}

func (s *Server) listTemplates(c Caller) any {
	list := []map[string]any{}
	for _, r := range templates {
		if c.hasOrAny(r.Scope) {
			list = append(list, map[string]any{"uriTemplate": r.URI, "name": r.Name, "title": r.Title,
				"description": r.Description, "mimeType": "application/json"})
		}
	}
	return map[string]any{"resourceTemplates": list}
}

func (s *Server) readResource(ctx context.Context, c Caller, raw json.RawMessage) (any, error) {
	var p struct {
		URI string `json:"uri"`
	}
	if err := params(raw, &p); err != nil {
		return nil, err
	}
	v, err := s.resource(ctx, c, p.URI)
	if err != nil {
		return nil, resourceError(p.URI, err)
	}
	text, _ := json.MarshalIndent(v, "", "  ")
	return map[string]any{"contents": []map[string]any{{"uri": p.URI, "mimeType": "application/json", "text": string(text)}}}, nil
}

// resource reads one URI as c.
func (s *Server) resource(ctx context.Context, c Caller, uri string) (any, error) {
	need := func(sc Scope) error {
		if !c.Has(sc) {
			return &RPCError{Code: CodeMissingScope, Message: "Insufficient token scope: " + uri + " needs " + string(sc)}
		}
		return nil
	}
	rest, ok := strings.CutPrefix(uri, "svc://")
	if !ok {
		return nil, &RPCError{Code: CodeResourceNotFound, Message: "Resource not found: " + uri}
	}
	parts := strings.Split(rest, "/")
	switch {
	case rest == "server/info":
		return map[string]any{"name": s.opts.Info.Name, "version": s.opts.Info.Version, "node_id": s.opts.Info.NodeID,
			"protocol": ProtocolVersion, "scopes": c.scopes(), "read_only": c.ReadOnly}, nil
	case rest == "collections":
		if err := need(ScopeRead); err != nil {
			return nil, err
		}
		return s.rest(ctx, c.controlPrincipal(), Call{Method: "GET", Path: "/admin/collections"})
	case rest == "audit/recent":
		if err := need(ScopeRead); err != nil {
			return nil, err
		}
		return s.rest(ctx, c.controlPrincipal(), Call{Method: "GET", Path: "/admin/audit-log", Query: url.Values{"perPage": {"50"}}})
	case rest == "settings":
		if err := need(ScopeAdmin); err != nil {
			return nil, err
		}
		return s.rest(ctx, c.controlPrincipal(), Call{Method: "GET", Path: "/admin/settings"})
	case len(parts) == 2 && parts[0] == "collection" && parts[1] != "":
		if err := need(ScopeRead); err != nil {
			return nil, err
		}
		return s.rest(ctx, c.controlPrincipal(), Call{Method: "GET", Path: "/admin/collections/" + url.PathEscape(parts[1])})
	case len(parts) == 3 && parts[0] == "record" && parts[1] != "" && parts[2] != "":
		if err := need(ScopeRead); err != nil {
			return nil, err
		}
		return s.rest(ctx, c.recordPrincipal(), Call{Method: "GET", Path: "/" + url.PathEscape(parts[1]) + "/" + url.PathEscape(parts[2])})
	case len(parts) == 2 && parts[0] == "logs":
		if err := need(ScopeRead); err != nil {
			return nil, err
		}
		return s.readLogs(c, parts[1], 1000)
	}
	return nil, &RPCError{Code: CodeResourceNotFound, Message: "Resource not found: " + uri}
}

// resourceError maps a failed read to a protocol error: 404 is the
// protocol's not-found, 401 and 403 the missing-scope code, others -32603
// with the reason.
func resourceError(uri string, err error) error {
	var rerr *RPCError
	if errors.As(err, &rerr) {
		return rerr
	}
	var re *restError
	if errors.As(err, &re) {
		switch re.status {
		case 404:
			return &RPCError{Code: CodeResourceNotFound, Message: "Resource not found: " + uri, Data: map[string]any{"reason": re.msg}}
		case 401, 403:
			return &RPCError{Code: CodeMissingScope, Message: re.msg, Data: map[string]any{"uri": uri}}
		}
	}
	return &RPCError{Code: CodeInternal, Message: err.Error(), Data: map[string]any{"uri": uri}}
}
