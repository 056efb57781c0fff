package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"svcd/api/apitest"
)

// mcpSDKDir is where npm installed @modelcontextprotocol/sdk ($MCP_SDK_DIR,
// else ~/.cache/svcd/mcpsdk, where .ci/run puts it).
func mcpSDKDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("MCP_SDK_DIR")
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".cache", "svcd", "mcpsdk")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		apitest.NeedPeer(t, "the MCP TypeScript SDK", "npm install --prefix ~/.cache/svcd/mcpsdk @modelcontextprotocol/sdk@1 (or set MCP_SDK_DIR)")
	}
	if _, err := exec.LookPath("node"); err != nil {
		apitest.NeedPeer(t, "node", "apt-get install nodejs")
	}
	return dir
}

// buildSvcdBinary builds ./cmd/svcd for the stdio bridge.
func buildSvcdBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "svcd")
	cmd := exec.Command("go", "build", "-tags", "sqlite_fts5", "-o", bin, "svcd/cmd/svcd")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build svcd: %v\n%s", err, out)
	}
	return bin
}

// sdkReport is what testdata/mcp/client.mjs prints.
type sdkReport struct {
	Server struct {
		Name string `json:"name"`
	} `json:"server"`
	Protocol     string         `json:"protocol"`
	Tools        []string       `json:"tools"`
	CreateSchema map[string]any `json:"createSchema"`
	Created      sdkCall        `json:"created"`
	List         sdkCall        `json:"list"`
	Secret       sdkCall        `json:"secret"`
	Admin        sdkCall        `json:"admin"`
	BadArgs      sdkCall        `json:"badArgs"`
	Resources    []string       `json:"resources"`
	Templates    []string       `json:"templates"`
	Info         map[string]any `json:"info"`
	Record       map[string]any `json:"record"`
	Prompts      []string       `json:"prompts"`
	PBPrompt     string         `json:"pbPrompt"`
}

type sdkCall struct {
	IsError    bool           `json:"isError"`
	Structured map[string]any `json:"structured"`
	Text       string         `json:"text"`
	Code       int            `json:"code"`
	Message    string         `json:"message"`
}

// TestMCPWithTheOfficialSDK drives the official MCP TypeScript SDK client
// (npm @modelcontextprotocol/sdk) against a live node over Streamable HTTP
// and through the stdio bridge (`svcd mcp`, plain and --read-only): it
// initializes, lists and calls tools, reads resources and templates, and
// gets prompts, with the SDK's own schema checks on every answer.
func TestMCPWithTheOfficialSDK(t *testing.T) {
	t.Parallel()
	sdk := mcpSDKDir(t)
	bin := buildSvcdBinary(t)
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, map[string]any{"name": "notes", "fields": []map[string]any{
		{"name": "title", "type": "text", "required": true}, {"name": "body", "type": "editor"}}})
	s.CreateCollection(t, map[string]any{"name": "secrets", "fields": []map[string]any{{"name": "v", "type": "text"}}})
	tok := mcpTokenOf(t, s, s.AdminToken(t), "mcp:read", "mcp:write")

	run := func(mode string, extra ...string) sdkReport {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		args := append([]string{"testdata/mcp/client.mjs", sdk, mode, s.URL, tok, bin}, extra...)
		cmd := exec.CommandContext(ctx, "node", args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("node client (%s %v): %v\n%s", mode, extra, err, stderr.String())
		}
		var r sdkReport
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatalf("client output: %v: %s", err, out)
		}
		return r
	}
	for _, mode := range []string{"http", "stdio"} {
		t.Run(mode, func(t *testing.T) {
			r := run(mode)
			// The HTTP transport keeps the negotiated revision (it sends it
			// as MCP-Protocol-Version); stdio has no such header.
			if r.Server.Name != "svcd" || mode == "http" && r.Protocol != "2025-06-18" {
				t.Errorf("server %q, protocol %q", r.Server.Name, r.Protocol)
			}
			for _, want := range []string{"svc.list_notes", "svc.create_notes", "svc.seed", "svc.list_secrets", "svc.describe_collection"} {
				if !slices.Contains(r.Tools, want) {
					t.Errorf("tools %v lack %s", r.Tools, want)
				}
			}
			if slices.Contains(r.Tools, "svc.create_collection") || slices.Contains(r.Tools, "svc.run_sql") {
				t.Errorf("mcp:read+write sees admin or SQL tools: %v", r.Tools)
			}
			if req, _ := r.CreateSchema["required"].([]any); len(req) != 1 || req[0] != "title" {
				t.Errorf("create_notes input schema: %v", r.CreateSchema)
			}
			if r.Created.IsError || r.Created.Structured["title"] != "from the sdk" {
				t.Errorf("create_notes: %+v", r.Created)
			}
			if r.List.IsError || !strings.Contains(r.List.Text, "from the sdk") {
				t.Errorf("list_notes: %+v", r.List)
			}
			if r.Admin.Code != -32001 {
				t.Errorf("create_collection without mcp:admin: %+v, want -32001", r.Admin)
			}
			if r.BadArgs.Code != -32602 {
				t.Errorf("list_notes with a bad perPage: %+v, want -32602", r.BadArgs)
			}
			if !slices.Equal(r.Resources, []string{"svc://audit/recent", "svc://collections", "svc://server/info"}) ||
				!slices.Equal(r.Templates, []string{"svc://collection/{name}", "svc://logs/{date}", "svc://record/{collection}/{id}"}) {
				t.Errorf("resources %v, templates %v", r.Resources, r.Templates)
			}
			if r.Record["title"] != "from the sdk" || r.Info["protocol"] != "2025-06-18" {
				t.Errorf("record resource %v, server info %v", r.Record, r.Info)
			}
			if !slices.Equal(r.Prompts, []string{"audit-rules", "debug-request", "design-collection", "import-from-pocketbase", "optimize-schema"}) {
				t.Errorf("prompts %v", r.Prompts)
			}
			if !strings.Contains(r.PBPrompt, `"name":"posts"`) || !strings.Contains(r.PBPrompt, "cascadeDelete") {
				t.Errorf("import-from-pocketbase prompt: %.300s", r.PBPrompt)
			}
		})
	}
	t.Run("stdio --read-only", func(t *testing.T) {
		r := run("stdio", "--read-only")
		if slices.Contains(r.Tools, "svc.create_notes") || slices.Contains(r.Tools, "svc.seed") || !slices.Contains(r.Tools, "svc.list_notes") {
			t.Errorf("read-only tools: %v", r.Tools)
		}
		if r.Created.Code != -32001 {
			t.Errorf("create_notes through a read-only bridge: %+v, want -32001", r.Created)
		}
		if r.Info["read_only"] != true {
			t.Errorf("server info: %v", r.Info)
		}
	})
}
