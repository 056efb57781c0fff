package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The stdio bridge (`svcd mcp`): a desktop MCP client starts it as a
// subprocess and speaks newline-delimited JSON-RPC on its stdin and
// stdout; the bridge forwards each message to the agent protocol of a
// running node (POST SVC_URL/api/v1/mcp, Streamable HTTP) with
// SVC_MCP_TOKEN, and writes back what the node answers. Nothing runs in
// the bridge itself: rules, scopes and the Raft path are the node's.
// --read-only asks the node to hide and refuse every tool that writes
// (it can only narrow the token).

// mcpOptions are the bridge's flags.
type mcpOptions struct {
	url      string
	readOnly bool
}

func mcpFlagSet(o *mcpOptions) *flag.FlagSet {
	fs := flag.NewFlagSet("mcp", flag.ContinueOnError)
	def := os.Getenv("SVC_URL")
	if def == "" {
		def = "http://127.0.0.1:" + envOr("SVC_PORT", "8090")
	}
	fs.StringVar(&o.url, "url", def, "`URL` of the node (SVC_URL; default http://127.0.0.1:$SVC_PORT)")
	fs.BoolVar(&o.readOnly, "read-only", false, "remove the tools that write (records, schema, settings) and refuse SQL writes")
	return fs
}

func runMCP(args []string) error {
	var o mcpOptions
	if err := parseArgs(mcpFlagSet(&o), args); err != nil {
		return err
	}
	token := os.Getenv("SVC_MCP_TOKEN")
	if token == "" {
		return errors.New("SVC_MCP_TOKEN is not set: mint an API token with an mcp:* scope (docs/mcp.md)")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	b := &mcpBridge{
		endpoint: strings.TrimSuffix(o.url, "/") + "/api/v1/mcp",
		token:    token, readOnly: o.readOnly,
		client: &http.Client{Timeout: 5 * time.Minute},
		out:    os.Stdout,
	}
	return b.run(ctx, os.Stdin)
}

// mcpBridge relays messages between stdio and a node.
type mcpBridge struct {
	endpoint string
	token    string
	readOnly bool
	client   *http.Client

	mu      sync.Mutex // guards out, session and version
	out     io.Writer
	session string
	version string
}

// run reads messages until stdin closes. initialize is relayed alone (its
// answer carries the session); other messages run concurrently, as a
// client may send a ping or a cancellation while a tool call runs.
func (b *mcpBridge) run(ctx context.Context, in io.Reader) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 32<<20)
	var wg sync.WaitGroup
	defer wg.Wait()
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		msg := append([]byte(nil), line...)
		var head struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal(msg, &head)
		if head.Method == "initialize" {
			b.forward(ctx, msg, head.ID, true)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			b.forward(ctx, msg, head.ID, false)
		}()
	}
	return sc.Err()
}

// forward posts one message and writes the answer (or, for a request, a
// JSON-RPC error when the node refused at the HTTP level).
func (b *mcpBridge) forward(ctx context.Context, msg []byte, id json.RawMessage, initialize bool) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.endpoint, bytes.NewReader(msg))
	if err != nil {
		b.fail(id, -32603, err.Error())
		return
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+b.token)
	if b.readOnly {
		req.Header.Set("X-Svc-Mcp-Read-Only", "1")
	}
	b.mu.Lock()
	if b.session != "" && !initialize {
		req.Header.Set("Mcp-Session-Id", b.session)
	}
	if b.version != "" {
		req.Header.Set("Mcp-Protocol-Version", b.version)
	}
	b.mu.Unlock()
	res, err := b.client.Do(req)
	if err != nil {
		b.fail(id, -32603, "svcd is unreachable at "+b.endpoint+": "+err.Error())
		return
	}
	defer res.Body.Close()
	if initialize && res.StatusCode == http.StatusOK {
		b.mu.Lock()
		b.session = res.Header.Get("Mcp-Session-Id")
		b.mu.Unlock()
	}
	switch {
	case res.StatusCode == http.StatusAccepted:
		return
	case strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream"):
		b.relayEvents(res.Body)
	case res.StatusCode == http.StatusOK || res.StatusCode == http.StatusBadRequest && isRPC(res):
		body, _ := io.ReadAll(res.Body)
		if initialize {
			b.noteVersion(body)
		}
		b.write(bytes.TrimSpace(body))
	default:
		var env struct {
			Error string `json:"error"`
		}
		body, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
		_ = json.Unmarshal(body, &env)
		if env.Error == "" {
			env.Error = res.Status
		}
		code := -32603
		if res.StatusCode == http.StatusUnauthorized || res.StatusCode == http.StatusForbidden {
			code = -32001
		}
		b.fail(id, code, fmt.Sprintf("svcd answered %d: %s", res.StatusCode, env.Error))
	}
}

func isRPC(res *http.Response) bool {
	return strings.HasPrefix(res.Header.Get("Content-Type"), "application/json")
}

// noteVersion keeps the negotiated protocol revision for later headers.
func (b *mcpBridge) noteVersion(body []byte) {
	var r struct {
		Result struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"result"`
	}
	if json.Unmarshal(body, &r) == nil && r.Result.ProtocolVersion != "" {
		b.mu.Lock()
		b.version = r.Result.ProtocolVersion
		b.mu.Unlock()
	}
}

// relayEvents writes the data of each SSE event as one message.
func (b *mcpBridge) relayEvents(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 32<<20)
	var data []byte
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " ")...)
		case line == "" && len(data) > 0:
			b.write(data)
			data = nil
		}
	}
	if len(data) > 0 {
		b.write(data)
	}
}

// fail answers a request with a JSON-RPC error (a notification gets none).
func (b *mcpBridge) fail(id json.RawMessage, code int, msg string) {
	if len(id) == 0 || string(id) == "null" {
		fmt.Fprintln(os.Stderr, "svcd mcp:", msg)
		return
	}
	out, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
	b.write(out)
}

func (b *mcpBridge) write(msg []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, _ = b.out.Write(append(append([]byte(nil), msg...), '\n'))
}
