package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
)

// ProtocolVersion is the revision this server speaks (SPEC.md).
const ProtocolVersion = "2025-06-18"

// supportedVersions are the revisions a client may ask for; any other is
// answered with ProtocolVersion, as the protocol's negotiation wants.
var supportedVersions = []string{"2025-06-18", "2025-03-26", "2024-11-05"}

// SupportedVersion reports whether v is a revision this server speaks (the
// transport checks the MCP-Protocol-Version header with it).
func SupportedVersion(v string) bool { return slices.Contains(supportedVersions, v) }

// Options are the server's collaborators. Backend and Catalog are
// required; a nil SQL, Logs or Events makes the tools that need them
// answer a tool error saying they are not available.
type Options struct {
	Backend Backend
	Catalog Catalog
	SQL     SQLRunner
	Logs    LogReader
	Events  EventDispatcher
	Info    Info
	Logger  *slog.Logger
}

// Server answers the agent protocol's JSON-RPC messages. It holds no
// per-client state: the registry is rebuilt for each message.
type Server struct {
	opts Options
}

// New builds a server.
func New(opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Info.Name == "" {
		opts.Info.Name = "svcd"
	}
	opts.Info.Protocol = ProtocolVersion
	return &Server{opts: opts}
}

// Message is one parsed client message.
type Message struct {
	req request
}

// Method is the message's method ("" for a response).
func (m Message) Method() string { return m.req.Method }

// IsRequest reports a request (a method and an id): it gets an answer.
func (m Message) IsRequest() bool { return m.req.Method != "" && len(m.req.ID) > 0 }

// Parse reads one JSON-RPC message. A batch (a JSON array) is refused:
// revision 2025-06-18 removed batching. The error is the answer to send.
func Parse(body []byte) (Message, []byte) {
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		return Message{}, encode(response{JSONRPC: "2.0", ID: json.RawMessage("null"),
			Error: rpcErr(CodeInvalidRequest, "JSON-RPC batches are not supported by protocol revision "+ProtocolVersion)})
	}
	var m Message
	if err := json.Unmarshal(body, &m.req); err != nil {
		return Message{}, encode(response{JSONRPC: "2.0", ID: json.RawMessage("null"),
			Error: rpcErr(CodeParseError, "Parse error: "+err.Error())})
	}
	if m.req.JSONRPC != "2.0" || (m.req.Method == "" && m.req.Result == nil && m.req.Error == nil) {
		id := m.req.ID
		if len(id) == 0 {
			id = json.RawMessage("null")
		}
		return Message{}, encode(response{JSONRPC: "2.0", ID: id,
			Error: rpcErr(CodeInvalidRequest, `Invalid request: want a JSON-RPC 2.0 object with "jsonrpc": "2.0" and a method`)})
	}
	return m, nil
}

// Handle answers one message for caller c; a notification or a response
// gets nil.
func (s *Server) Handle(ctx context.Context, c Caller, m Message) []byte {
	if !m.IsRequest() {
		return nil
	}
	result, err := s.dispatch(ctx, c, m.req.Method, m.req.Params)
	out := response{JSONRPC: "2.0", ID: m.req.ID}
	if err != nil {
		rerr, ok := err.(*RPCError)
		if !ok {
			s.opts.Logger.Error("mcp: internal error", "method", m.req.Method, "err", err)
			rerr = rpcErr(CodeInternal, "Internal error")
		}
		out.Error = rerr
	} else {
		out.Result = result
	}
	return encode(out)
}

func encode(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("mcp: encode: %v", err)) // our own types always encode
	}
	return b
}

// params decodes a request's params into v (absent params: zero v).
func params(raw json.RawMessage, v any) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return rpcErr(CodeInvalidParams, "Invalid params: "+err.Error())
	}
	return nil
}

func (s *Server) dispatch(ctx context.Context, c Caller, method string, raw json.RawMessage) (any, error) {
	switch method {
	case "initialize":
		return s.initialize(c, raw)
	case "ping":
		return struct{}{}, nil
	case "tools/list":
		return s.listTools(c), nil
	case "tools/call":
		return s.callTool(ctx, c, raw)
	case "resources/list":
		return s.listResources(c), nil
	case "resources/templates/list":
		return s.listTemplates(c), nil
	case "resources/read":
		return s.readResource(ctx, c, raw)
	case "prompts/list":
		return listPrompts(), nil
	case "prompts/get":
		return getPrompt(raw)
	}
	return nil, rpcErr(CodeMethodNotFound, "Method not found: "+method)
}

const instructions = `svcd is a backend with collections, records, rules, auth and a Raft-replicated store. ` +
	`Tools are named svc.<action>: svc.list_<collection>, svc.get_<collection>, svc.create_<collection>, ` +
	`svc.update_<collection>, svc.delete_<collection> act on records through the same rules as the REST API; ` +
	`svc.list_collections and svc.describe_collection show the schema. Which tools you see depends on the API token's mcp scopes. ` +
	`Filters use svcd's filter language, e.g. status = "open" && created > 1700000000.`

func (s *Server) initialize(c Caller, raw json.RawMessage) (any, error) {
	var p struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if err := params(raw, &p); err != nil {
		return nil, err
	}
	version := ProtocolVersion
	if SupportedVersion(p.ProtocolVersion) {
		version = p.ProtocolVersion
	}
	return map[string]any{
		"protocolVersion": version,
		"capabilities": map[string]any{
			"tools":     map[string]any{"listChanged": true},
			"resources": map[string]any{},
			"prompts":   map[string]any{},
		},
		"serverInfo":   map[string]any{"name": s.opts.Info.Name, "title": "svcd", "version": s.opts.Info.Version},
		"instructions": instructions,
	}, nil
}
