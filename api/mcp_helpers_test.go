package api_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"svcd/api/apitest"
)

// rpcAnswer is a JSON-RPC response as the tests read it.
type rpcAnswer struct {
	ID     any             `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// mcpRPC posts one JSON-RPC request to /api/v1/mcp with headers and
// answers the HTTP response and the decoded answer.
func mcpRPC(t testing.TB, s *apitest.Server, headers map[string]string, method string, params any) (*http.Response, rpcAnswer) {
	t.Helper()
	msg := map[string]any{"jsonrpc": "2.0", "id": 1, "method": method}
	if params != nil {
		msg["params"] = params
	}
	res, body := s.Do(t, "POST", "/api/v1/mcp", msg, headers)
	var a rpcAnswer
	if res.StatusCode == http.StatusOK {
		if err := json.Unmarshal(body, &a); err != nil {
			t.Fatalf("mcp %s: %v: %s", method, err, body)
		}
	}
	return res, a
}

// mcpResult is mcpRPC that must succeed; it decodes the result into v.
func mcpResult(t testing.TB, s *apitest.Server, headers map[string]string, method string, params any, v any) {
	t.Helper()
	res, a := mcpRPC(t, s, headers, method, params)
	if res.StatusCode != http.StatusOK || a.Error != nil {
		t.Fatalf("mcp %s: HTTP %d, error %+v", method, res.StatusCode, a.Error)
	}
	if err := json.Unmarshal(a.Result, v); err != nil {
		t.Fatalf("mcp %s result: %v: %s", method, err, a.Result)
	}
}

// toolCall is a CallToolResult.
type toolCall struct {
	IsError bool `json:"isError"`
	Content []struct {
		Text string `json:"text"`
	} `json:"content"`
	Structured map[string]any `json:"structuredContent"`
}

func (c toolCall) text() string {
	if len(c.Content) == 0 {
		return ""
	}
	return c.Content[0].Text
}

// callTool calls a tool; a protocol error is returned as code (0: none).
func callTool(t testing.TB, s *apitest.Server, headers map[string]string, name string, args map[string]any) (toolCall, int) {
	t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	res, a := mcpRPC(t, s, headers, "tools/call", map[string]any{"name": name, "arguments": args})
	if res.StatusCode != http.StatusOK {
		t.Fatalf("tools/call %s: HTTP %d", name, res.StatusCode)
	}
	if a.Error != nil {
		return toolCall{}, a.Error.Code
	}
	var out toolCall
	if err := json.Unmarshal(a.Result, &out); err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	return out, 0
}

// toolNames lists the tools the headers' token sees.
func toolNames(t testing.TB, s *apitest.Server, headers map[string]string) []string {
	t.Helper()
	var out struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	mcpResult(t, s, headers, "tools/list", nil, &out)
	names := make([]string, len(out.Tools))
	for i, tl := range out.Tools {
		names[i] = tl.Name
	}
	return names
}

// mcpTokenOf mints an API token as the admin whose session token is
// session.
func mcpTokenOf(t testing.TB, s *apitest.Server, session string, scopes ...string) string {
	t.Helper()
	out := data(t, s, http.StatusCreated, "POST", "/api/v1/admin/api-tokens", map[string]any{"name": "agent", "scopes": scopes}, bearer(session))
	return out["token"].(string)
}
