// Package apitest starts a real svcd node in-process for HTTP tests: the
// SQLite state machine, the engine, a one-voter Raft node and the api
// router, served by a real http.Server on a loopback port. It also offers a
// table-driven scenario runner in the style of PocketBase's
// tests.ApiScenario.
package apitest

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"svcd/api"
	"svcd/cmd/svcd/stack"
	"svcd/engine/password"
	"svcd/fsm"
	"svcd/internal/logfile"
)

// The credentials AdminToken uses for the first (owner) admin.
const (
	AdminEmail    = "admin@example.com"
	AdminPassword = "correct-horse-42" // 16 characters
)

// Options configure Start.
type Options struct {
	// SetupKey is passed to api.Options.SetupKey.
	SetupKey string
	// WrapAuthenticator, when set, wraps the authenticator the HTTP layer
	// sees (for example to inject principals of other admin roles).
	WrapAuthenticator func(api.Authenticator) api.Authenticator
	// Logger receives the node's logs; they are discarded when nil unless
	// SVCD_TEST_LOG=1.
	Logger *slog.Logger
	// EncryptionKey is SVC_ENCRYPTION_KEY for the node (empty: none).
	EncryptionKey string
	// ClusterKey is SVC_CLUSTER_KEY as the HTTP layer sees it: it
	// authenticates POST /_/join (empty: every join is refused).
	ClusterKey string
	// BodyMinRate and BodyGrace are api.Options'; zero is the default
	// (tests of slow bodies make them small to run fast).
	BodyMinRate int64
	BodyGrace   time.Duration
	// SSEKeepAlive is api.Options' (0: the default).
	SSEKeepAlive time.Duration
	// PublicDir and PublicSPA are api.Options' (SVC_PUBLIC_DIR, SVC_PUBLIC_SPA).
	PublicDir string
	PublicSPA bool
	// Clock is the node's wall clock (stack.Config.Clock; nil: time.Now),
	// usually a Clock's Now.
	Clock func() time.Time
	// ProgressInterval is stack.Config.ProgressInterval: the time between
	// two progress lines of long work (0: the default, 5 s).
	ProgressInterval time.Duration
	// WebhookInterval is stack.Config.WebhookInterval: the webhook
	// dispatcher's tick (0: the default, 2 s).
	WebhookInterval time.Duration
	// PushRoots is stack.Config.PushRoots: the roots APNs connections
	// trust (a local APNs server's; nil: the system's).
	PushRoots *x509.CertPool
	// TeeLogs sends the node's slog lines (debug and above) to its log
	// folder too, as svcd serve does; otherwise it holds request lines.
	TeeLogs bool
}

// Server is one running node.
type Server struct {
	// URL is the base URL, for example http://127.0.0.1:41234.
	URL   string
	Stack *stack.Stack
	// DataDir is the node's data directory (data.db, raft/, jwt.key).
	DataDir string
	// Client has no cookie jar: every request carries only what it is given.
	Client *http.Client
	// API is the HTTP handler the node serves (for the hooks of api's
	// export_test files).
	API *api.Server
	// RaftAddr is the node's Raft address (a Cluster's nodes; "" for
	// Start's single node, which has no network transport).
	RaftAddr string

	mu       sync.Mutex
	token    string
	stop     func()
	stopOnce sync.Once
	down     atomic.Bool
}

// Start opens a node in a temporary directory, waits until it is ready and
// serves the API on a loopback port. Everything is torn down by t.Cleanup.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	logger := opts.logger()
	dir := t.TempDir()
	var logs *logfile.Dir
	if opts.TeeLogs {
		logs = logfile.Open(stack.LogsDir(dir), logfile.Options{Now: opts.Clock})
		t.Cleanup(func() { logs.Close() })
		logger = slog.New(logfile.Tee(logger.Handler(), logs.Handler(slog.LevelDebug)))
	}
	st, err := stack.Open(stack.Config{
		Logs:             logs,
		DataDir:          dir,
		PasswordParams:   testPasswordParams(),
		OnStall:          func(st fsm.Stall) { t.Errorf("apitest: the state machine stopped: %s", st.Reason) },
		EncryptionKey:    opts.EncryptionKey,
		Clock:            opts.Clock,
		ProgressInterval: opts.ProgressInterval,
		WebhookInterval:  opts.WebhookInterval,
		PushRoots:        opts.PushRoots,
	}, logger)
	if err != nil {
		t.Fatalf("apitest: open stack: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := st.WaitReady(ctx); err != nil {
		st.Close()
		t.Fatalf("apitest: node not ready: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		st.Close()
		t.Fatalf("apitest: listen: %v", err)
	}
	return serve(t, st, dir, ln, logger, opts)
}

// testPasswordParams are cheap argon2id costs: tests hash many passwords.
func testPasswordParams() password.Params {
	return password.Params{Memory: 64, Time: 1, Threads: 1, KeyLen: 32}
}

// logger is the node's logger: Options.Logger, else a discarding one
// unless SVCD_TEST_LOG=1.
func (opts Options) logger() *slog.Logger {
	if opts.Logger != nil {
		return opts.Logger
	}
	if os.Getenv("SVCD_TEST_LOG") == "1" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// serve serves st's API on ln until Stop or the end of the test, which
// also closes st.
func serve(t testing.TB, st *stack.Stack, dir string, ln net.Listener, logger *slog.Logger, opts Options) *Server {
	t.Helper()
	o := st.APIOptions(logger)
	if opts.WrapAuthenticator != nil {
		o.Authenticator = opts.WrapAuthenticator(o.Authenticator)
	}
	o.SetupKey, o.ClusterKey, o.BodyMinRate, o.BodyGrace = opts.SetupKey, opts.ClusterKey, opts.BodyMinRate, opts.BodyGrace
	o.SSEKeepAlive = opts.SSEKeepAlive
	o.PublicDir, o.PublicSPA = opts.PublicDir, opts.PublicSPA
	handler := api.New(o)
	hs := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	hs.RegisterOnShutdown(handler.Drain) // as svcd serve does
	served := make(chan struct{})
	go func() {
		defer close(served)
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("apitest: serve: %v", err)
		}
	}()
	srv := &Server{
		URL:     "http://" + ln.Addr().String(),
		Stack:   st,
		DataDir: dir,
		Client:  &http.Client{Timeout: 30 * time.Second},
		API:     handler,
	}
	srv.stop = func() {
		// Connections the client dialed but never used count as active
		// for 5 s in Shutdown: close the client's side first, and do not
		// wait long for stragglers (no request is in flight any more).
		srv.Client.CloseIdleConnections()
		sctx, scancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer scancel()
		if err := hs.Shutdown(sctx); err != nil {
			hs.Close()
		}
		<-served
		if err := st.Close(); err != nil {
			t.Errorf("apitest: close stack: %v", err)
		}
	}
	t.Cleanup(srv.Stop)
	return srv
}

// Stop stops serving and closes the node (as a SIGTERM would: a leader
// hands leadership over first). It is safe to call more than once; the
// end of the test calls it.
func (s *Server) Stop() {
	s.stopOnce.Do(func() {
		s.down.Store(true)
		s.stop()
	})
}

// stopped reports whether Stop was called.
func (s *Server) stopped() bool { return s.down.Load() }

// AdminToken creates the first admin (AdminEmail, AdminPassword) through
// POST /api/v1/admin/setup on the first call, or signs it in when an admin
// exists already, and returns its token (cached afterwards). With a setup
// key configured use AdminTokenWithKey.
func (s *Server) AdminToken(t testing.TB) string {
	t.Helper()
	return s.adminToken(t, nil)
}

// AdminTokenWithKey is AdminToken for a node started with a setup key.
func (s *Server) AdminTokenWithKey(t testing.TB, key string) string {
	t.Helper()
	return s.adminToken(t, map[string]string{"X-Setup-Key": key})
}

func (s *Server) adminToken(t testing.TB, headers map[string]string) string {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.token != "" {
		return s.token
	}
	creds := map[string]string{"email": AdminEmail, "password": AdminPassword}
	res, body := s.Do(t, http.MethodPost, "/api/v1/admin/setup", creds, headers)
	if res.StatusCode == http.StatusConflict {
		// The test ran the setup itself: sign in instead.
		res, body = s.Do(t, http.MethodPost, "/api/v1/admin/auth/login", creds, nil)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("apitest: admin login: %d %s", res.StatusCode, body)
		}
	} else if res.StatusCode != http.StatusCreated {
		t.Fatalf("apitest: admin setup: %d %s", res.StatusCode, body)
	}
	var out struct {
		Data struct {
			Token string `json:"token"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &out); err != nil || out.Data.Token == "" {
		t.Fatalf("apitest: admin setup answer %s: %v", body, err)
	}
	s.token = out.Data.Token
	return s.token
}

// AdminHeaders returns an Authorization header map for the admin token,
// merged with extra (extra wins).
func (s *Server) AdminHeaders(t testing.TB, extra map[string]string) map[string]string {
	t.Helper()
	h := map[string]string{"Authorization": "Bearer " + s.AdminToken(t)}
	for k, v := range extra {
		h[k] = v
	}
	return h
}

// Do sends one request and returns the response (body already read and
// closed) and its body. body: nil sends none, a string or []byte is sent
// raw, anything else is JSON-encoded. It fails the test on a transport
// error, so call it from the test's goroutine; other goroutines use Send.
func (s *Server) Do(t testing.TB, method, path string, body any, headers map[string]string) (*http.Response, []byte) {
	t.Helper()
	res, out, err := s.Send(method, path, body, headers)
	if err != nil {
		t.Fatalf("apitest: %v", err)
	}
	return res, out
}

// Send is Do that returns transport errors instead of failing the test; it
// is safe to call from any goroutine.
func (s *Server) Send(method, path string, body any, headers map[string]string) (*http.Response, []byte, error) {
	var rd io.Reader
	jsonBody := false
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		enc, err := json.Marshal(b)
		if err != nil {
			return nil, nil, fmt.Errorf("encode body: %w", err)
		}
		rd = bytes.NewReader(enc)
		jsonBody = true
	}
	req, err := http.NewRequest(method, s.URL+path, rd)
	if err != nil {
		return nil, nil, err
	}
	if jsonBody {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := s.Client.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, nil, fmt.Errorf("read body of %s %s: %w", method, path, err)
	}
	return res, out, nil
}

// AdminDo is Do with the admin bearer token added.
func (s *Server) AdminDo(t testing.TB, method, path string, body any) (*http.Response, []byte) {
	t.Helper()
	return s.Do(t, method, path, body, s.AdminHeaders(t, nil))
}

// MustAdmin is AdminDo that fails the test unless the status is want, and
// decodes the body into a generic map.
func (s *Server) MustAdmin(t testing.TB, want int, method, path string, body any) map[string]any {
	t.Helper()
	res, b := s.AdminDo(t, method, path, body)
	if res.StatusCode != want {
		t.Fatalf("%s %s: status %d, want %d: %s", method, path, res.StatusCode, want, b)
	}
	if len(b) == 0 {
		return nil
	}
	return DecodeMap(t, b)
}

// CreateCollection creates a collection from its JSON form as the admin
// and returns the answer's data.
func (s *Server) CreateCollection(t testing.TB, def map[string]any) map[string]any {
	t.Helper()
	out := s.MustAdmin(t, http.StatusCreated, http.MethodPost, "/api/v1/admin/collections", def)
	return Obj(t, out["data"])
}

// CreateRecord creates a record as the admin and returns it.
func (s *Server) CreateRecord(t testing.TB, coll string, rec map[string]any) map[string]any {
	t.Helper()
	out := s.MustAdmin(t, http.StatusCreated, http.MethodPost, "/api/v1/"+coll, rec)
	return Obj(t, out["data"])
}

// DecodeMap decodes a JSON object.
func DecodeMap(t testing.TB, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("apitest: decode %q: %v", b, err)
	}
	return m
}

// Obj asserts that v is a JSON object.
func Obj(t testing.TB, v any) map[string]any {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("apitest: want an object, got %T (%v)", v, v)
	}
	return m
}

// List asserts that v is a JSON array.
func List(t testing.TB, v any) []any {
	t.Helper()
	l, ok := v.([]any)
	if !ok {
		t.Fatalf("apitest: want an array, got %T (%v)", v, v)
	}
	return l
}

// Int converts a decoded JSON number.
func Int(t testing.TB, v any) int64 {
	t.Helper()
	n, ok := v.(json.Number)
	if !ok {
		t.Fatalf("apitest: want a number, got %T (%v)", v, v)
	}
	i, err := n.Int64()
	if err != nil {
		f, ferr := n.Float64()
		if ferr != nil {
			t.Fatalf("apitest: bad number %v", n)
		}
		return int64(f)
	}
	return i
}
