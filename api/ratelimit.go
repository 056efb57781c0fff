package api

import (
	"crypto/sha256"
	"log/slog"
	"math"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"svcd/engine"
	"svcd/internal/tracing"
)

// Rate limiting (SPEC.md "Limits"): token buckets per rule and per key, in
// this process's memory, so a cluster of N nodes lets a client reach up to
// N times a limit. The middleware is the innermost of the root chain.
//
// It is installed when Options.RateLimit is set (SVC_RATE_ENABLED, on by
// default in svcd serve, off in a zero Options so that test harnesses and
// embedders opt in) and can be switched off at runtime with the setting
// rate_limit.enabled. Rules come from rate_limit.rules (ratelimit_rules.go)
// and are recompiled when the setting's string changes; a malformed value
// is logged once and the defaults apply.
//
// The key is the SHA-256 of the credential (bearer token, else the
// svc_admin_token or svc_user_token cookie, as authenticate reads them) when
// it is valid, else the client IP (clientip.go; an IPv6 client by its /64).
// A credential that does not verify counts as none: otherwise a client
// could mint a fresh bucket per request by sending made-up tokens. Valid
// credentials are remembered for credCacheTTL, so the limiter verifies a
// token about twice a minute rather than on every request (authenticate
// still checks every request in full).

// credCacheTTL bounds how long a verified credential keeps its own bucket
// without being checked again; credCacheMax bounds the cache.
const (
	credCacheTTL = 30 * time.Second
	credCacheMax = 16384
)

const errRateLimited = "Too many requests; retry later"

type rateLimiter struct {
	now     func() time.Time
	log     *slog.Logger
	mu      sync.Mutex // serialises recompiles
	set     atomic.Pointer[rateRuleSet]
	limited atomic.Uint64 // requests answered 429

	credMu sync.Mutex
	creds  map[[32]byte]credEntry
}

type credEntry struct {
	aud     rateAudience
	expires int64
}

// newRateLimiter returns nil when on is false.
func newRateLimiter(on bool, log *slog.Logger) *rateLimiter {
	if !on {
		return nil
	}
	return &rateLimiter{now: time.Now, log: log, creds: map[[32]byte]credEntry{}}
}

// rules returns the compiled rule set for the current setting value.
func (rl *rateLimiter) rules(raw string) *rateRuleSet {
	if set := rl.set.Load(); set != nil && set.raw == raw {
		return set
	}
	rl.mu.Lock()
	defer rl.mu.Unlock()
	old := rl.set.Load()
	if old != nil && old.raw == raw {
		return old
	}
	set := compileRateRules(raw, old)
	if set.invalid != nil {
		rl.log.Warn("rate_limit.rules is malformed; the default rules apply", "err", set.invalid)
	}
	rl.set.Store(set)
	return set
}

// rateLimit is the middleware.
func (s *Server) rateLimit(next http.Handler) http.Handler {
	rl := s.rate
	if rl == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, span := tracing.Phase(r.Context(), "rate_limit")
		retry, rule := s.rateCheck(rl, r)
		span.End()
		if rule != nil {
			rl.limited.Add(1)
			s.log.Debug("rate limited", "method", r.Method, "path", r.URL.Path, "rule", rule.label)
			s.writeError(w, r, &engine.Error{
				Kind: engine.KindTooManyRequests, Message: errRateLimited, RetryAfter: retry,
				Details: map[string]any{"rule": rule.label},
			})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// rateCheck charges r against its rules. When a rule refuses it, it returns
// the whole seconds to wait (at least 1) and that rule.
func (s *Server) rateCheck(rl *rateLimiter, r *http.Request) (int, *rateRule) {
	path := r.URL.Path
	if rateSkipped(path) && (r.URL.RawPath == "" || rateSkipped(r.URL.RawPath)) {
		return 0, nil
	}
	if !settingOn(s.settings.Setting(rateEnabledSetting)) {
		return 0, nil
	}
	set := rl.rules(s.settings.Setting(rateRulesSetting))
	if len(set.rules) == 0 {
		return 0, nil
	}
	now := rl.now()
	key, aud := s.rateKey(rl, r, now)
	general, specific := set.pick(path, requestAction(r.Method, path), aud)
	// Look first, then take: a refused request costs no rule a token.
	rules := [2]*rateRule{specific, general}
	var lims [2]*rate.Limiter
	var wait time.Duration
	var by *rateRule
	for i, rule := range rules {
		if rule == nil {
			continue
		}
		lims[i] = rule.buckets.get(key, now)
		if d := tokenWait(lims[i], now); d > wait {
			wait, by = d, rule
		}
	}
	if by == nil {
		for i, lim := range lims {
			if lim != nil && !lim.AllowN(now, 1) {
				// A concurrent request of this key took the last token.
				wait, by = max(tokenWait(lim, now), time.Millisecond), rules[i]
				break
			}
		}
	}
	if by == nil {
		return 0, nil
	}
	// Whole seconds, rounded up, after rounding off float noise.
	return max(1, int(math.Ceil(wait.Round(time.Millisecond).Seconds()))), by
}

// tokenWait is how long until lim holds a whole token (0 if it does).
func tokenWait(lim *rate.Limiter, now time.Time) time.Duration {
	t := lim.TokensAt(now)
	if t >= 1 {
		return 0
	}
	return time.Duration((1 - t) / float64(lim.Limit()) * float64(time.Second))
}

// settingOn reads a boolean setting that defaults to on.
func settingOn(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "0", "false", "off", "no":
		return false
	}
	return true
}

// rateKey returns the bucket key of r and the audience of its caller.
func (s *Server) rateKey(rl *rateLimiter, r *http.Request, now time.Time) (bucketKey, rateAudience) {
	if r.Header.Get("Authorization") != "" || r.Header.Get("Cookie") != "" {
		toks, _ := requestTokens(r)
		for _, tok := range toks {
			sum := sha256.Sum256([]byte(tok))
			if aud, ok := s.verifiedCredential(r, rl, sum, tok, now); ok {
				return bucketKey{kind: keyToken, id: sum}, aud
			}
		}
	}
	k := bucketKey{kind: keyIP}
	a := s.clientAddr(r)
	if a.Is6() {
		b := a.As16()
		clear(b[8:]) // one client, one /64
		copy(k.id[:], b[:])
	} else if a.IsValid() {
		b := a.As4()
		copy(k.id[:], b[:])
	}
	return k, audGuest
}

// verifiedCredential reports whether tok (whose hash is sum) is a valid
// credential, and its audience.
func (s *Server) verifiedCredential(r *http.Request, rl *rateLimiter, sum [32]byte, tok string, now time.Time) (rateAudience, bool) {
	ns := now.UnixNano()
	rl.credMu.Lock()
	e, ok := rl.creds[sum]
	rl.credMu.Unlock()
	if ok && ns < e.expires {
		return e.aud, true
	}
	p, err := s.authn.Authenticate(r.Context(), tok)
	if err != nil {
		return audGuest, false
	}
	aud := audUser
	if p.IsAdmin() {
		aud = audAdmin
	}
	rl.credMu.Lock()
	if len(rl.creds) >= credCacheMax {
		for k, v := range rl.creds {
			if ns >= v.expires {
				delete(rl.creds, k)
			}
		}
		if len(rl.creds) >= credCacheMax {
			clear(rl.creds)
		}
	}
	rl.creds[sum] = credEntry{aud: aud, expires: ns + int64(credCacheTTL)}
	rl.credMu.Unlock()
	return aud, true
}
