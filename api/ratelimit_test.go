package api_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"svcd/api"
	"svcd/api/apitest"
)

// The rate-limit tests run a second router with the limiter on over the
// node of an apitest server (whose own router has it off, like every other
// test's), on a loopback port, with a frozen clock. Clients dial from
// chosen loopback addresses (127.0.0.0/8 all reach the listener) so that
// each case has client IPs of its own.

// rlClock is a settable clock.
type rlClock struct{ ns atomic.Int64 }

func (c *rlClock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *rlClock) advance(d time.Duration) { c.ns.Add(int64(d)) }

type rlNode struct {
	base  *apitest.Server // limiter off: the admin's door
	url   string
	srv   *api.Server
	clock *rlClock
}

func startLimited(t *testing.T, trustedProxies string) *rlNode {
	t.Helper()
	base := apitest.Start(t, apitest.Options{})
	base.AdminToken(t)
	opts := base.Stack.APIOptions(slog.New(slog.DiscardHandler))
	opts.RateLimit, opts.TrustedProxies = true, trustedProxies
	opts.Realtime = nil // the limiter's skips are checked on paths that answer at once
	srv := api.New(opts)
	clock := &rlClock{}
	clock.ns.Store(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	api.SetRateClock(srv, clock.now)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("serve: %v", err)
		}
	}()
	t.Cleanup(func() { hs.Close() })
	return &rlNode{base: base, url: "http://" + ln.Addr().String(), srv: srv, clock: clock}
}

// from is a client of the limited router dialing from the loopback
// address ip.
func (n *rlNode) from(t *testing.T, ip string) *apitest.Server {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	tr := &http.Transport{DialContext: d.DialContext}
	t.Cleanup(tr.CloseIdleConnections)
	return &apitest.Server{URL: n.url, Stack: n.base.Stack, DataDir: n.base.DataDir,
		Client: &http.Client{Transport: tr, Timeout: 30 * time.Second}}
}

// setRules sets rate_limit.rules through the admin API (nil unsets it).
func (n *rlNode) setRules(t *testing.T, rules any) {
	t.Helper()
	v := rules
	if rules != nil {
		if _, isString := rules.(string); !isString {
			b, err := json.Marshal(rules)
			if err != nil {
				t.Fatal(err)
			}
			v = string(b)
		}
	}
	n.setting(t, "rate_limit.rules", v)
}

func (n *rlNode) setting(t *testing.T, key string, v any) {
	t.Helper()
	n.base.MustAdmin(t, http.StatusOK, http.MethodPatch, "/api/v1/admin/settings", map[string]any{key: v})
}

type rule struct {
	Label    string `json:"label"`
	Max      int    `json:"max"`
	WindowMs int    `json:"windowMs"`
}

// req is one request of a case.
type req struct {
	method, path string
	body         any
	headers      map[string]string
}

// burst sends r n times and fails unless every answer is not a 429.
func burst(t *testing.T, c *apitest.Server, n int, r req) {
	t.Helper()
	for i := range n {
		res, body := c.Do(t, r.method, r.path, r.body, r.headers)
		if res.StatusCode == http.StatusTooManyRequests {
			t.Fatalf("%s %s: request %d of %d limited: %s", r.method, r.path, i+1, n, body)
		}
	}
}

// mustLimit sends r once and checks the 429: envelope, rule, Retry-After.
func mustLimit(t *testing.T, c *apitest.Server, r req, rule string, retryAfter string) {
	t.Helper()
	res, body := c.Do(t, r.method, r.path, r.body, r.headers)
	if res.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("%s %s: status %d, want 429: %s", r.method, r.path, res.StatusCode, body)
	}
	if got := res.Header.Get("Retry-After"); got != retryAfter {
		t.Errorf("Retry-After %q, want %q", got, retryAfter)
	}
	if res.Header.Get("X-Svc-Node") == "" {
		t.Error("429 without X-Svc-Node: the limiter must sit inside the root middleware")
	}
	var env struct {
		Error   string         `json:"error"`
		Code    int            `json:"code"`
		Details map[string]any `json:"details"`
	}
	if err := json.Unmarshal(body, &env); err != nil || env.Code != 429 || env.Error == "" || env.Details["rule"] != rule {
		t.Errorf("429 body %s: want the error envelope with code 429 and details.rule %q (%v)", body, rule, err)
	}
}

var (
	statusReq = req{method: http.MethodGet, path: "/api/v1/admin/setup/status"}
	loginReq  = req{method: http.MethodPost, path: "/api/v1/admin/auth/login",
		body: map[string]string{"email": apitest.AdminEmail, "password": "wrong-password-1"}}
	createReq = req{method: http.MethodPost, path: "/api/v1/nosuchcollection", body: map[string]any{"a": 1}}
)

func TestRateLimitDefaults(t *testing.T) {
	n := startLimited(t, "")
	for i, tc := range []struct {
		name   string
		r      req
		max    int
		rule   string
		window time.Duration
	}{
		{"any path 300 per 10 s", statusReq, 300, "/api/*", 10 * time.Second},
		{"auth 10 per 3 s", loginReq, 10, "*:auth", 3 * time.Second},
		{"create 60 per 5 s", createReq, 60, "*:create", 5 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := n.from(t, fmt.Sprintf("127.0.1.%d", i+1))
			burst(t, c, tc.max, tc.r)
			mustLimit(t, c, tc.r, tc.rule, "1")
			// A refused request costs nothing: one refill interval
			// later exactly one more goes through.
			n.clock.advance(tc.window/time.Duration(tc.max) + time.Millisecond)
			burst(t, c, 1, tc.r)
			mustLimit(t, c, tc.r, tc.rule, "1")
			// A whole window refills the bucket.
			n.clock.advance(tc.window)
			burst(t, c, tc.max, tc.r)
			mustLimit(t, c, tc.r, tc.rule, "1")
		})
	}
	t.Run("a tripped auth rule leaves the general budget alone", func(t *testing.T) {
		c := n.from(t, "127.0.1.10")
		burst(t, c, 10, loginReq)
		for range 20 {
			mustLimit(t, c, loginReq, "*:auth", "1")
		}
		burst(t, c, 290, statusReq) // 300 minus the 10 logins
		mustLimit(t, c, statusReq, "/api/*", "1")
	})
	if got := api.RateLimited(n.srv); got < 30 {
		t.Errorf("limited counter %d, want at least 30", got)
	}
}

func TestRateLimitCustomRules(t *testing.T) {
	n := startLimited(t, "")
	c := n.from(t, "127.0.2.1")
	n.setRules(t, []rule{
		{"/api/v1/admin/setup/status", 2, 10000},
		{"/api/*", 1000, 10000},
		{"*:create", 3, 60000},
		{"/api/v1/things:create", 5, 60000},
	})
	t.Run("retry-after counts whole seconds to the next token", func(t *testing.T) {
		burst(t, c, 2, statusReq)
		mustLimit(t, c, statusReq, "/api/v1/admin/setup/status", "5")
		n.clock.advance(4 * time.Second)
		mustLimit(t, c, statusReq, "/api/v1/admin/setup/status", "1")
		n.clock.advance(time.Second)
		burst(t, c, 1, statusReq)
		mustLimit(t, c, statusReq, "/api/v1/admin/setup/status", "5")
	})
	t.Run("a longer path wins over a shorter one of the same action", func(t *testing.T) {
		things := req{method: http.MethodPost, path: "/api/v1/things", body: map[string]any{}}
		burst(t, c, 5, things)
		mustLimit(t, c, things, "/api/v1/things:create", "12")
		other := req{method: http.MethodPost, path: "/api/v1/others", body: map[string]any{}}
		burst(t, c, 3, other)
		mustLimit(t, c, other, "*:create", "20")
	})
	t.Run("custom rules replace the defaults", func(t *testing.T) {
		burst(t, c, 30, loginReq) // no *:auth rule any more
	})
	t.Run("unsetting restores the defaults", func(t *testing.T) {
		n.setRules(t, nil)
		c := n.from(t, "127.0.2.2")
		burst(t, c, 10, loginReq)
		mustLimit(t, c, loginReq, "*:auth", "1")
	})
	t.Run("an empty array limits nothing", func(t *testing.T) {
		n.setRules(t, "[]")
		c := n.from(t, "127.0.2.3")
		burst(t, c, 50, loginReq)
	})
}

func TestRateLimitAudience(t *testing.T) {
	n := startLimited(t, "")
	n.setRules(t, []rule{{"/api/*@guest", 2, 60000}, {"/api/*@admin", 4, 60000}, {"/api/*", 6, 60000}})
	c := n.from(t, "127.0.3.1")
	burst(t, c, 2, statusReq)
	mustLimit(t, c, statusReq, "/api/*@guest", "30")
	admin := statusReq
	admin.headers = map[string]string{"Authorization": "Bearer " + n.base.AdminToken(t)}
	burst(t, c, 4, admin)
	mustLimit(t, c, admin, "/api/*@admin", "15")
}

func TestRateLimitSwitches(t *testing.T) {
	n := startLimited(t, "")
	t.Run("Options.RateLimit off (SVC_RATE_ENABLED=0) never limits", func(t *testing.T) {
		burst(t, n.base, 20, loginReq)
		burst(t, n.base, 400, statusReq)
	})
	t.Run("setting rate_limit.enabled", func(t *testing.T) {
		c := n.from(t, "127.0.4.1")
		for _, off := range []any{"0", false, "false"} {
			n.setting(t, "rate_limit.enabled", off)
			burst(t, c, 20, loginReq)
		}
		n.setting(t, "rate_limit.enabled", "1")
		burst(t, c, 10, loginReq)
		mustLimit(t, c, loginReq, "*:auth", "1")
		n.setting(t, "rate_limit.enabled", nil) // the default is on
		mustLimit(t, c, loginReq, "*:auth", "1")
	})
}

func TestRateLimitSkips(t *testing.T) {
	n := startLimited(t, "")
	n.setRules(t, []rule{{"*", 1, 60000}})
	c := n.from(t, "127.0.5.1")
	for _, path := range []string{
		"/_/health", "/_/ready", "/_/cluster", "/api/v1/_/metrics",
		"/realtime", "/api/v1/realtime", "/api/v1/realtime/presence/x",
		"/api/v1/admin/logs", "/api/v1/admin/logs/search", "/api/v1/admin/audit-log",
	} {
		burst(t, c, 5, req{method: http.MethodGet, path: path})
	}
	burst(t, c, 1, req{method: http.MethodGet, path: "/api/v1/admin/logsx"})
	for _, path := range []string{"/api/v1/admin/logsx", "/api/v1/admin/setup/status", "/anything", "/api/v1/%5F/metrics"} {
		mustLimit(t, c, req{method: http.MethodGet, path: path}, "*", "60")
	}
}

func TestRateLimitKeys(t *testing.T) {
	n := startLimited(t, "")
	n.setRules(t, []rule{{"/api/*", 3, 60000}})
	tok1 := n.base.AdminToken(t)
	res, body := n.base.Do(t, http.MethodPost, "/api/v1/admin/auth/login",
		map[string]string{"email": apitest.AdminEmail, "password": apitest.AdminPassword}, nil)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("second login: %d %s", res.StatusCode, body)
	}
	var login struct {
		Data struct {
			Token string `json:"token"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &login); err != nil || login.Data.Token == "" || login.Data.Token == tok1 {
		t.Fatalf("second login answer %s: %v", body, err)
	}
	tok2 := login.Data.Token
	bearer := func(tok string) req {
		r := statusReq
		r.headers = map[string]string{"Authorization": "Bearer " + tok}
		return r
	}
	cookie := func(tok string) req {
		r := statusReq
		r.headers = map[string]string{"Cookie": "svc_admin_token=" + tok}
		return r
	}

	c := n.from(t, "127.0.6.1")
	burst(t, c, 3, statusReq)
	mustLimit(t, c, statusReq, "/api/*", "20")

	// Same IP, valid token: a bucket of its own; the cookie is the same
	// credential.
	burst(t, c, 2, bearer(tok1))
	burst(t, c, 1, cookie(tok1))
	mustLimit(t, c, bearer(tok1), "/api/*", "20")
	mustLimit(t, c, cookie(tok1), "/api/*", "20")
	// Another session of the same admin: another bucket.
	burst(t, c, 3, bearer(tok2))
	mustLimit(t, c, bearer(tok2), "/api/*", "20")
	// The token's bucket follows it to another IP.
	mustLimit(t, n.from(t, "127.0.6.2"), bearer(tok1), "/api/*", "20")
	// Made-up credentials count as none: the IP's bucket, already empty.
	for i := range 5 {
		mustLimit(t, c, bearer(fmt.Sprintf("made-up-%d", i)), "/api/*", "20")
		mustLimit(t, c, cookie(fmt.Sprintf("made-up-%d", i)), "/api/*", "20")
	}
	// Another IP, no token: a fresh bucket.
	burst(t, n.from(t, "127.0.6.3"), 3, statusReq)
}

func TestRateLimitForwardedFor(t *testing.T) {
	n := startLimited(t, "127.0.7.1, 10.0.0.0/8")
	n.setRules(t, []rule{{"/api/*", 2, 60000}})
	xff := func(v string) req {
		r := statusReq
		r.headers = map[string]string{"X-Forwarded-For": v}
		return r
	}
	proxy, stranger := n.from(t, "127.0.7.1"), n.from(t, "127.0.7.2")

	t.Run("trusted proxy: one bucket per forwarded client", func(t *testing.T) {
		burst(t, proxy, 2, xff("203.0.113.1"))
		mustLimit(t, proxy, xff("203.0.113.1"), "/api/*", "30")
		burst(t, proxy, 2, xff("203.0.113.2"))
		// Entries a client wrote itself, left of the one our proxy
		// added, change nothing; trusted hops right of it are skipped.
		mustLimit(t, proxy, xff("198.51.100.7, 203.0.113.1"), "/api/*", "30")
		mustLimit(t, proxy, xff("198.51.100.8, 203.0.113.1, 10.1.2.3"), "/api/*", "30")
		burst(t, proxy, 2, xff("198.51.100.8, 203.0.113.3, 10.1.2.3"))
	})
	t.Run("untrusted peer: the header is ignored", func(t *testing.T) {
		burst(t, stranger, 2, xff("203.0.113.50"))
		for i := range 5 {
			mustLimit(t, stranger, xff(fmt.Sprintf("203.0.113.%d", 60+i)), "/api/*", "30")
		}
	})
	t.Run("the setting overrides the environment", func(t *testing.T) {
		n.setting(t, "security.trusted_proxies", "127.0.7.2/32")
		burst(t, stranger, 2, xff("203.0.113.70"))
		// 127.0.7.1 is no longer trusted: its own bucket, whatever it
		// forwards.
		burst(t, proxy, 2, xff("203.0.113.80"))
		mustLimit(t, proxy, xff("203.0.113.81"), "/api/*", "30")
	})
}

func TestRateLimitMalformedRules(t *testing.T) {
	n := startLimited(t, "")
	for i, bad := range []string{
		`not json`,
		`{"label":"/api/*","max":1,"windowMs":1000}`,
		`[{"label":"api","max":1,"windowMs":1000}]`,
		`[{"label":"/api/*:fetch","max":1,"windowMs":1000}]`,
		`[{"label":"/api/*@robots","max":1,"windowMs":1000}]`,
		`[{"label":"/a*b","max":1,"windowMs":1000}]`,
		`[{"label":"/api/*","max":0,"windowMs":1000}]`,
		`[{"label":"/api/*","max":1,"windowMs":0}]`,
		`[{"label":"/api/*","max":1,"windowMs":1000,"audience":"@guest"}]`,
		`[{"label":"*","max":1,"windowMs":1000},{"label":" *","max":2,"windowMs":1000}]`,
	} {
		t.Run(bad, func(t *testing.T) {
			// No settings validator knows rate_limit.rules yet: the value
			// is stored, and the limiter falls back to the defaults.
			n.setRules(t, bad)
			c := n.from(t, fmt.Sprintf("127.0.8.%d", i+1))
			burst(t, c, 10, loginReq)
			mustLimit(t, c, loginReq, "*:auth", "1")
		})
	}
}
