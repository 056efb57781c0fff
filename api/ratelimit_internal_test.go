package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"svcd/engine"
)

// rlEngine answers settings from a map and accepts the tokens it lists.
type rlEngine struct {
	SettingStore
	settings map[string]string
	tokens   map[string]engine.Principal
}

func (e *rlEngine) Setting(key string) string { return e.settings[key] }

func (e *rlEngine) Authenticate(_ context.Context, raw string) (engine.Principal, error) {
	if p, ok := e.tokens[raw]; ok {
		return p, nil
	}
	return engine.Principal{}, errors.New("bad token")
}

func rlServer(settings map[string]string, env string) (*Server, *rlEngine) {
	eng := &rlEngine{settings: settings, tokens: map[string]engine.Principal{
		"admin-token": {Kind: engine.AdminPrincipal, ID: "adm_1"},
		"user-token":  {Kind: engine.User, ID: "u1"},
	}}
	log := slog.New(slog.DiscardHandler)
	s := &Server{settings: eng, authn: eng, log: log, rate: newRateLimiter(true, log), proxies: newProxyTrust(env, log)}
	return s, eng
}

func TestParseRateLabel(t *testing.T) {
	for _, tc := range []struct {
		label    string
		err      bool
		anyPath  bool
		prefix   string
		subtree  bool
		action   rateAction
		audience rateAudience
	}{
		{label: "*", anyPath: true},
		{label: "*:auth", anyPath: true, action: actAuth},
		{label: "*:*", anyPath: true},
		{label: "/api/*", prefix: "/api/"},
		{label: "/api/v1/posts", prefix: "/api/v1/posts", subtree: true},
		{label: "/api/v1/po*:create@guest", prefix: "/api/v1/po", action: actCreate, audience: audGuest},
		{label: " /api/*@auth ", prefix: "/api/", audience: audAuth},
		{label: "*:delete@admin", anyPath: true, action: actDelete, audience: audAdmin},
		{label: "*@user", anyPath: true, audience: audUser},
		{label: "", err: true},
		{label: "api/*", err: true},
		{label: "posts:create", err: true},
		{label: "*:list", err: true},
		{label: "*@everyone", err: true},
		{label: "/a*b", err: true},
		{label: "/**", err: true},
		{label: "/a b", err: true},
		{label: "*:auth:create", err: true},
	} {
		r, err := parseRateLabel(tc.label)
		if tc.err {
			if err == nil {
				t.Errorf("%q: want an error", tc.label)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.label, err)
			continue
		}
		if r.anyPath != tc.anyPath || r.prefix != tc.prefix || r.subtree != tc.subtree || r.action != tc.action || r.audience != tc.audience {
			t.Errorf("%q: got any=%v prefix=%q subtree=%v action=%d audience=%d", tc.label, r.anyPath, r.prefix, r.subtree, r.action, r.audience)
		}
	}
}

func TestRateRulePathMatch(t *testing.T) {
	for _, tc := range []struct {
		label, path string
		want        bool
	}{
		{"*", "/anything", true},
		{"/api/*", "/api/v1/x", true},
		{"/api/*", "/api", false},
		{"/api/*", "/apix", false},
		{"/api/v1/posts", "/api/v1/posts", true},
		{"/api/v1/posts", "/api/v1/posts/abc", true},
		{"/api/v1/posts", "/api/v1/postsx", false},
		{"/api/v1/posts/", "/api/v1/posts/abc", true},
		{"/api/v1/posts/", "/api/v1/posts", false},
		{"/api/v1/po*", "/api/v1/polls", true},
		{"/api/v1/po*", "/api/v1/p", false},
	} {
		r, err := parseRateLabel(tc.label)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.matchesPath(tc.path); got != tc.want {
			t.Errorf("%q matches %q: %v, want %v", tc.label, tc.path, got, tc.want)
		}
	}
}

func TestRateRulePick(t *testing.T) {
	set := compileRateRules(`[
		{"label":"/api/*","max":1,"windowMs":1000},
		{"label":"/api/v1/posts","max":1,"windowMs":1000},
		{"label":"/api/v1/posts@guest","max":1,"windowMs":1000},
		{"label":"/api/v1/posts@auth","max":1,"windowMs":1000},
		{"label":"*:create","max":1,"windowMs":1000},
		{"label":"*:create@admin","max":1,"windowMs":1000},
		{"label":"/api/v1/posts:create","max":1,"windowMs":1000},
		{"label":"/api/v1/:create","max":1,"windowMs":1000},
		{"label":"*:auth","max":1,"windowMs":1000}
	]`, nil)
	if set.invalid != nil {
		t.Fatal(set.invalid)
	}
	label := func(r *rateRule) string {
		if r == nil {
			return "-"
		}
		return r.label
	}
	for _, tc := range []struct {
		method, path      string
		aud               rateAudience
		general, specific string
	}{
		{"GET", "/api/v1/things", audGuest, "/api/*", "-"},
		{"GET", "/api/v1/posts", audGuest, "/api/v1/posts@guest", "-"},
		{"GET", "/api/v1/posts/x", audUser, "/api/v1/posts@auth", "-"},
		{"GET", "/api/v1/posts/x", audAdmin, "/api/v1/posts@auth", "-"},
		{"GET", "/other", audGuest, "-", "-"},
		{"POST", "/api/v1/posts", audGuest, "/api/v1/posts@guest", "/api/v1/posts:create"},
		{"POST", "/api/v1/things", audUser, "/api/*", "/api/v1/:create"},
		{"POST", "/api/v1/things", audAdmin, "/api/*", "/api/v1/:create"},
		{"POST", "/other", audAdmin, "-", "*:create@admin"},
		{"POST", "/other", audUser, "-", "*:create"},
		{"POST", "/api/v1/auth/users/login", audGuest, "/api/*", "*:auth"},
		{"POST", "/api/v1/admin/setup", audGuest, "/api/*", "*:auth"},
		{"DELETE", "/api/v1/posts/x", audGuest, "/api/v1/posts@guest", "-"},
	} {
		g, s := set.pick(tc.path, requestAction(tc.method, tc.path), tc.aud)
		if label(g) != tc.general || label(s) != tc.specific {
			t.Errorf("%s %s (aud %d): got %s + %s, want %s + %s", tc.method, tc.path, tc.aud, label(g), label(s), tc.general, tc.specific)
		}
	}
}

func TestRequestAction(t *testing.T) {
	for _, tc := range []struct {
		method, path string
		want         rateAction
	}{
		{"POST", "/api/v1/auth/users/login", actAuth},
		{"POST", "/api/v1/auth/refresh", actAuth},
		{"POST", "/api/v1/admin/auth/login", actAuth},
		{"POST", "/api/v1/admin/setup", actAuth},
		{"GET", "/api/v1/admin/setup/status", actRead},
		{"GET", "/api/v1/auth/me", actRead},
		{"GET", "/api/v1/auth/users/oauth2/authorize", actAuth},
		{"GET", "/api/v1/auth/users/oauth2/providers", actRead},
		{"POST", "/api/v1/posts", actCreate},
		{"POST", "/api/v1/admin/setupx", actCreate},
		{"POST", "/api/v1/flags/evaluate", actRead},
		{"POST", "/api/v1/admin/flags/x/evaluate", actCreate},
		{"HEAD", "/api/v1/posts", actRead},
		{"OPTIONS", "/api/v1/posts", actRead},
		{"PATCH", "/api/v1/posts/x", actUpdate},
		{"PUT", "/api/v1/posts/x", actUpdate},
		{"DELETE", "/api/v1/auth/users/webauthn/credentials/x", actDelete},
	} {
		if got := requestAction(tc.method, tc.path); got != tc.want {
			t.Errorf("%s %s: %d, want %d", tc.method, tc.path, got, tc.want)
		}
	}
}

func TestRateSkipped(t *testing.T) {
	for path, want := range map[string]bool{
		"/_/health": true, "/_/ready": true, "/_/join": true, "/api/v1/_/metrics": true,
		"/realtime": true, "/realtime/x": true, "/api/v1/realtime": true, "/api/v1/realtime/presence/c": true,
		"/api/v1/admin/logs": true, "/api/v1/admin/logs/search": true, "/api/v1/admin/audit-log": true,
		"/_": false, "/realtimex": false, "/api/v1/realtimes": false, "/api/v1/_x": false,
		"/api/v1/admin/logsx": false, "/api/v1/admin/settings": false, "/api/v1/metrics": false,
	} {
		if got := rateSkipped(path); got != want {
			t.Errorf("%s: %v, want %v", path, got, want)
		}
	}
}

func TestCompileRateRulesKeepsBuckets(t *testing.T) {
	a := compileRateRules(`[{"label":"/x","max":2,"windowMs":1000},{"label":"/y","max":2,"windowMs":1000}]`, nil)
	b := compileRateRules(`[{"label":"/x","max":2,"windowMs":1000},{"label":"/y","max":3,"windowMs":1000}]`, a)
	if b.rules[0].buckets != a.rules[0].buckets {
		t.Error("an unchanged rule lost its buckets")
	}
	if b.rules[1].buckets == a.rules[1].buckets {
		t.Error("a changed rule kept its buckets")
	}
	bad := compileRateRules(`[{"label":"x"}]`, b)
	if bad.invalid == nil || len(bad.rules) != len(defaultRateRules) {
		t.Errorf("malformed rules: invalid=%v, %d rules; want the defaults", bad.invalid, len(bad.rules))
	}
	if def := compileRateRules("  ", nil); def.invalid != nil || len(def.rules) != 3 || def.rules[0].label != "*:auth" {
		t.Errorf("unset: want the defaults, got %v", def.invalid)
	}
}

func TestBucketStoreEvictsIdle(t *testing.T) {
	st := newBucketStore(rate.Limit(1), 1, time.Second)
	t0 := time.Unix(1000, 0)
	key := func(i int) bucketKey {
		k := bucketKey{kind: keyIP}
		k.id[0], k.id[1] = byte(i), byte(i>>8)
		return k
	}
	for i := range 1000 {
		st.get(key(i), t0)
	}
	if n := st.size(); n != 1000 {
		t.Fatalf("%d buckets, want 1000", n)
	}
	// Keys used again within the window survive; the rest go once a
	// window has passed and their shard is touched.
	for i := range 10 {
		st.get(key(i), t0.Add(500*time.Millisecond))
	}
	for i := range 1000 {
		st.get(key(i+2000), t0.Add(1200*time.Millisecond))
	}
	if n := st.size(); n != 1010 {
		t.Fatalf("%d buckets after one window, want 1010 (10 reused + 1000 new)", n)
	}
	// An evicted bucket comes back full, as it would have been anyway.
	if lim := st.get(key(500), t0.Add(3*time.Second)); !lim.AllowN(t0.Add(3*time.Second), 1) {
		t.Error("a recreated bucket is not full")
	}
}

func TestBucketStoreIsBounded(t *testing.T) {
	st := newBucketStore(rate.Limit(1), 1, time.Hour)
	now := time.Unix(1000, 0)
	var k bucketKey
	k.kind = keyToken
	const n = bucketShards*maxBucketsPerShard + 50000
	for i := range n {
		k.id[0], k.id[1], k.id[2] = byte(i), byte(i>>8), byte(i>>16)
		st.get(k, now)
	}
	if got := st.size(); got > bucketShards*maxBucketsPerShard {
		t.Fatalf("%d buckets, cap %d", got, bucketShards*maxBucketsPerShard)
	}
}

func TestRateKey(t *testing.T) {
	s, _ := rlServer(map[string]string{}, "")
	rl := s.rate
	now := time.Unix(1000, 0)
	get := func(remote string, h map[string]string) (bucketKey, rateAudience) {
		r := httptest.NewRequest("GET", "/api/v1/x", nil)
		r.RemoteAddr = remote
		for k, v := range h {
			r.Header.Set(k, v)
		}
		return s.rateKey(rl, r, now)
	}
	ip1, aud := get("192.0.2.1:1", nil)
	if ip1.kind != keyIP || aud != audGuest {
		t.Errorf("anonymous: kind %d aud %d", ip1.kind, aud)
	}
	if k, _ := get("192.0.2.1:2", map[string]string{"Authorization": "Bearer nope"}); k != ip1 {
		t.Error("an invalid token must key by IP")
	}
	if k, _ := get("192.0.2.1:2", map[string]string{"Authorization": "Basic abc"}); k != ip1 {
		t.Error("a non-bearer header must key by IP")
	}
	adm, aud := get("192.0.2.1:1", map[string]string{"Authorization": "Bearer admin-token"})
	if adm.kind != keyToken || aud != audAdmin {
		t.Errorf("admin token: kind %d aud %d", adm.kind, aud)
	}
	if k, _ := get("198.51.100.1:1", map[string]string{"Cookie": "svc_admin_token=admin-token"}); k != adm {
		t.Error("the admin cookie must key like the bearer token")
	}
	if k, aud := get("198.51.100.1:1", map[string]string{"Cookie": "svc_admin_token=stale; svc_user_token=user-token"}); k.kind != keyToken || aud != audUser {
		t.Errorf("a stale admin cookie next to a valid user cookie: kind %d aud %d", k.kind, aud)
	}
	a, _ := get("[2001:db8:1:2:aaaa::1]:1", nil)
	b, _ := get("[2001:db8:1:2:bbbb::2]:1", nil)
	c, _ := get("[2001:db8:1:3::1]:1", nil)
	if a != b || a == c {
		t.Error("IPv6 clients must be keyed by their /64")
	}
	if v4, _ := get("[::ffff:192.0.2.1]:1", nil); v4 != ip1 {
		t.Error("an IPv4-mapped peer must key like the IPv4 address")
	}
}

func TestCredCacheBounded(t *testing.T) {
	s, eng := rlServer(map[string]string{}, "")
	for i := range credCacheMax + 10 {
		eng.tokens[fmt.Sprint("t", i)] = engine.Principal{Kind: engine.User}
	}
	now := time.Unix(1000, 0)
	for i := range credCacheMax + 10 {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("Authorization", fmt.Sprint("Bearer t", i))
		s.rateKey(s.rate, r, now)
	}
	if n := len(s.rate.creds); n > credCacheMax {
		t.Fatalf("%d cached credentials, cap %d", n, credCacheMax)
	}
	// A cached credential is checked again once its entry expires.
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("Authorization", "Bearer t1")
	s.rateKey(s.rate, r, now)
	delete(eng.tokens, "t1")
	if k, _ := s.rateKey(s.rate, r, now.Add(credCacheTTL/2)); k.kind != keyToken {
		t.Error("a cached credential was checked again before its entry expired")
	}
	if k, _ := s.rateKey(s.rate, r, now.Add(credCacheTTL)); k.kind != keyIP {
		t.Error("an expired cache entry was trusted")
	}
}

// BenchmarkRateLimit measures what the middleware adds to a request that
// it lets through, with the default rules.
func BenchmarkRateLimit(b *testing.B) {
	ok := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	for _, bc := range []struct {
		name    string
		off     bool
		setting string
		headers map[string]string
		remote  string
	}{
		{name: "off", off: true},
		{name: "disabled-by-setting", setting: "0"},
		{name: "anonymous-ip"},
		{name: "anonymous-ipv6", remote: "[2001:db8::1]:1"},
		{name: "bearer-token", headers: map[string]string{"Authorization": "Bearer admin-token"}},
		{name: "cookie", headers: map[string]string{"Cookie": "theme=dark; svc_user_token=user-token"}},
		{name: "trusted-proxy-xff", remote: "10.0.0.1:1", headers: map[string]string{"X-Forwarded-For": "203.0.113.9, 10.0.0.2"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			settings := map[string]string{}
			if bc.setting != "" {
				settings[rateEnabledSetting] = bc.setting
			}
			s, _ := rlServer(settings, "10.0.0.0/8")
			if bc.off {
				s.rate = nil
			}
			// A huge budget, so every request is let through and the
			// buckets do the same work each time.
			s.settings.(*rlEngine).settings[rateRulesSetting] = `[{"label":"*:read","max":1000000000,"windowMs":1000},{"label":"/api/*","max":1000000000,"windowMs":1000}]`
			h := s.rateLimit(ok)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				reqs := make([]*http.Request, 200)
				for i := range reqs {
					r := httptest.NewRequest("GET", "/api/v1/posts/abc", nil)
					r.RemoteAddr = bc.remote
					if r.RemoteAddr == "" {
						r.RemoteAddr = fmt.Sprintf("192.0.2.%d:1234", i)
					}
					for k, v := range bc.headers {
						r.Header.Set(k, v)
					}
					reqs[i] = r
				}
				for i := 0; pb.Next(); i++ {
					h.ServeHTTP(nil, reqs[i%len(reqs)])
				}
			})
		})
	}
}
