package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/google/jsonschema-go/jsonschema"
)

// ToolPrefix starts every tool name (SPEC.md).
const ToolPrefix = "svc."

// Tool is one entry of the registry: its definition, the scope that shows
// it, and what a call does. run answers the tool's result (any JSON value)
// or an error: a *RPCError is a protocol error, any other a tool error the
// model reads (isError).
type Tool struct {
	Name        string
	Title       string
	Description string
	Scope       Scope
	Input       *jsonschema.Schema
	ReadOnly    bool
	Destructive bool
	run         func(ctx context.Context, c Caller, args map[string]any) (any, error)
}

// toolError is a failure the model should read (a tool result with
// isError), not a protocol error; payload, when set, is the result shown
// (a failed SQL run's answer, with its errorCode).
type toolError struct {
	msg     string
	payload any
}

func (e *toolError) Error() string { return e.msg }

func toolErrorf(format string, a ...any) error { return &toolError{msg: fmt.Sprintf(format, a...)} }

// registry is every tool that exists now, whatever the caller's scopes:
// the fixed tools and five per collection.
func (s *Server) registry() []*Tool {
	var out []*Tool
	out = append(out, s.introspectionTools()...)
	out = append(out, s.schemaTools()...)
	out = append(out, s.configTools()...)
	out = append(out, s.seedTool(), s.sqlTool())
	for _, col := range s.opts.Catalog.Collections() {
		out = append(out, s.recordTools(col)...)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// visible reports whether c sees t.
func (c Caller) sees(t *Tool) bool {
	if !c.Has(t.Scope) {
		return false
	}
	// Read-only transports keep only tools that do not write.
	return !c.ReadOnly || t.ReadOnly || t.Scope == ScopeSQL
}

func (s *Server) listTools(c Caller) any {
	list := []map[string]any{}
	for _, t := range s.registry() {
		if !c.sees(t) {
			continue
		}
		list = append(list, map[string]any{
			"name":        t.Name,
			"title":       t.Title,
			"description": t.Description,
			"inputSchema": t.Input,
			"annotations": map[string]any{
				"title":           t.Title,
				"readOnlyHint":    t.ReadOnly,
				"destructiveHint": t.Destructive,
				"idempotentHint":  t.ReadOnly,
				"openWorldHint":   false,
			},
		})
	}
	return map[string]any{"tools": list}
}

func (s *Server) callTool(ctx context.Context, c Caller, raw json.RawMessage) (any, error) {
	var p struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
	}
	if err := params(raw, &p); err != nil {
		return nil, err
	}
	var tool *Tool
	for _, t := range s.registry() {
		if t.Name == p.Name {
			tool = t
			break
		}
	}
	if tool == nil {
		return nil, rpcErr(CodeInvalidParams, "Unknown tool: "+p.Name)
	}
	if !c.sees(tool) {
		e := rpcErr(CodeMissingScope, fmt.Sprintf("Insufficient token scope: %s needs %s", tool.Name, tool.Scope))
		if c.ReadOnly && (Caller{Principal: c.Principal}).Has(tool.Scope) {
			e.Message = "Tool " + tool.Name + " writes: this connection is read-only"
		}
		e.Data = map[string]any{"required_scope": string(tool.Scope)}
		return nil, e
	}
	if p.Arguments == nil {
		p.Arguments = map[string]any{}
	}
	if err := validateArgs(tool, p.Arguments); err != nil {
		return nil, err
	}
	out, err := tool.run(ctx, c, p.Arguments)
	var rerr *RPCError
	if errors.As(err, &rerr) {
		return nil, rerr
	}
	var terr *toolError
	if errors.As(err, &terr) && terr.payload != nil {
		return toolResult(terr.payload, true), nil
	}
	if err != nil {
		return toolResult(map[string]any{"error": err.Error()}, true), nil
	}
	return toolResult(out, false), nil
}

// validateArgs checks a call's arguments against the tool's input schema
// (-32602 when they do not fit).
func validateArgs(t *Tool, args map[string]any) error {
	rs, err := t.Input.Resolve(nil)
	if err != nil {
		return fmt.Errorf("resolve schema of %s: %w", t.Name, err)
	}
	// Validate the arguments as JSON decodes them (numbers as float64).
	b, _ := json.Marshal(args)
	var inst any
	_ = json.Unmarshal(b, &inst)
	if err := rs.Validate(inst); err != nil {
		return &RPCError{Code: CodeInvalidParams, Message: "Invalid arguments for " + t.Name + ": " + err.Error()}
	}
	return nil
}

// toolResult is a CallToolResult: the value as JSON text, and as
// structured content when it is an object.
func toolResult(v any, isError bool) map[string]any {
	text, _ := json.MarshalIndent(v, "", "  ")
	res := map[string]any{
		"content": []map[string]any{{"type": "text", "text": string(text)}},
		"isError": isError,
	}
	if m, ok := asObject(v); ok {
		res["structuredContent"] = m
	}
	return res
}

// asObject answers v as a JSON object, when it encodes as one.
func asObject(v any) (map[string]any, bool) {
	if m, ok := v.(map[string]any); ok {
		return m, true
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, false
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil || m == nil {
		return nil, false
	}
	return m, true
}
