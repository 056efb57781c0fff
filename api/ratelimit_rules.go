package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"golang.org/x/time/rate"
)

// Rate-limit rules: the setting rate_limit.rules is a JSON array of
// {label, max, windowMs}. A label is
//
//	path [":" action] ["@" audience]
//
//   - path: "*" (any path) or a path starting with "/". A trailing "*" makes
//     it a plain prefix ("/api/*" matches every path starting with "/api/",
//     "/api/v1/po*" matches "/api/v1/posts" and "/api/v1/polls"); without
//     one it matches the path itself and everything below it
//     ("/api/v1/posts" matches "/api/v1/posts" and "/api/v1/posts/x", not
//     "/api/v1/postsx").
//   - action: "*" (the default), "auth", "create", "read", "update" or
//     "delete". auth is a POST to /api/v1/auth/..., /api/v1/admin/auth/...
//     or /api/v1/admin/setup, or a GET of /api/v1/auth/:c/oauth2/authorize;
//     the public flag evaluation (a POST) is read;
//     otherwise the method decides: POST create,
//     GET, HEAD and OPTIONS read, PUT and PATCH update, DELETE delete.
//   - audience: "guest" (no valid credential), "auth" (any valid
//     credential), "user" (a user token) or "admin" (an admin token or an
//     API token). Omitted: everyone.
//
// A rule allows max requests per windowMs to one key, as a token bucket of
// max tokens refilled at max/windowMs: a burst of max, then one request
// every windowMs/max.
//
// A request is charged against at most two rules: the most specific rule
// whose action is "*" and the most specific rule for its own action. More
// specific means a longer path (after removing a trailing "*"), then a
// named audience ("guest", "user", "admin" beat "auth", which beats none),
// then the earlier rule in the list. So the defaults below charge a login
// against "*:auth" and "/api/*", and a rule "/api/v1/posts" replaces
// "/api/*" for that collection without touching "*:create".

// rateRulesSetting and rateEnabledSetting are the runtime settings.
const (
	rateRulesSetting   = "rate_limit.rules"
	rateEnabledSetting = "rate_limit.enabled"
)

// Bounds of a rule set.
const (
	maxRateRules  = 100
	maxRateWindow = 24 * time.Hour
)

// rateRuleJSON is one element of rate_limit.rules.
type rateRuleJSON struct {
	Label    string `json:"label"`
	Max      int    `json:"max"`
	WindowMs int64  `json:"windowMs"`
}

// defaultRateRules apply when rate_limit.rules is unset or empty (SPEC.md).
var defaultRateRules = []rateRuleJSON{
	{Label: "*:auth", Max: 10, WindowMs: 3000},
	{Label: "*:create", Max: 60, WindowMs: 5000},
	{Label: "/api/*", Max: 300, WindowMs: 10000},
}

type rateAction uint8

const (
	actAny rateAction = iota
	actAuth
	actCreate
	actRead
	actUpdate
	actDelete
)

var rateActions = map[string]rateAction{
	"*": actAny, "auth": actAuth, "create": actCreate, "read": actRead, "update": actUpdate, "delete": actDelete,
}

type rateAudience uint8

const (
	audAny rateAudience = iota
	audAuth
	audGuest
	audUser
	audAdmin
)

var rateAudiences = map[string]rateAudience{
	"auth": audAuth, "guest": audGuest, "user": audUser, "admin": audAdmin,
}

// matches reports whether a rule of audience a applies to a caller of
// audience c (one of audGuest, audUser, audAdmin).
func (a rateAudience) matches(c rateAudience) bool {
	switch a {
	case audAny:
		return true
	case audAuth:
		return c != audGuest
	}
	return a == c
}

// rateRule is one compiled rule with its buckets.
type rateRule struct {
	label    string
	max      int
	window   time.Duration
	anyPath  bool
	prefix   string
	subtree  bool // prefix matches itself and what is below it
	action   rateAction
	audience rateAudience
	rank     int // specificity
	buckets  *bucketStore
}

// rateRuleSet is the compiled value of rate_limit.rules.
type rateRuleSet struct {
	raw   string
	rules []*rateRule
	// invalid is why raw was rejected (the defaults apply instead).
	invalid error
}

// compileRateRules compiles raw; a malformed value yields the defaults and
// the reason in invalid. Buckets of rules that old holds unchanged are kept.
func compileRateRules(raw string, old *rateRuleSet) *rateRuleSet {
	set := &rateRuleSet{raw: raw}
	specs := defaultRateRules
	if strings.TrimSpace(raw) != "" {
		parsed, err := parseRateRules(raw)
		if err != nil {
			set.invalid = err
		} else {
			specs = parsed
		}
	}
	rules, err := buildRateRules(specs)
	if err != nil && set.invalid == nil {
		set.invalid = err
		rules, _ = buildRateRules(defaultRateRules)
	}
	set.rules = rules
	if old != nil {
		for _, r := range set.rules {
			for _, o := range old.rules {
				if o.label == r.label && o.max == r.max && o.window == r.window {
					r.buckets = o.buckets
					break
				}
			}
		}
	}
	for _, r := range set.rules {
		if r.buckets == nil {
			r.buckets = newBucketStore(rate.Limit(float64(r.max)/r.window.Seconds()), r.max, r.window)
		}
	}
	return set
}

func parseRateRules(raw string) ([]rateRuleJSON, error) {
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.DisallowUnknownFields()
	var specs []rateRuleJSON
	if err := dec.Decode(&specs); err != nil {
		return nil, fmt.Errorf("not a JSON array of {label, max, windowMs}: %w", err)
	}
	if dec.More() {
		return nil, errors.New("trailing data after the JSON array")
	}
	if specs == nil {
		return nil, errors.New("not a JSON array of {label, max, windowMs}")
	}
	return specs, nil
}

func buildRateRules(specs []rateRuleJSON) ([]*rateRule, error) {
	if len(specs) > maxRateRules {
		return nil, fmt.Errorf("more than %d rules", maxRateRules)
	}
	rules := make([]*rateRule, 0, len(specs))
	seen := map[string]bool{}
	for i, sp := range specs {
		r, err := parseRateLabel(sp.Label)
		if err != nil {
			return nil, fmt.Errorf("rule %d: %w", i, err)
		}
		if seen[r.label] {
			return nil, fmt.Errorf("rule %d: label %q appears twice", i, r.label)
		}
		seen[r.label] = true
		if sp.Max < 1 {
			return nil, fmt.Errorf("rule %d (%s): max must be at least 1", i, r.label)
		}
		r.max = sp.Max
		r.window = time.Duration(sp.WindowMs) * time.Millisecond
		if sp.WindowMs < 1 || r.window > maxRateWindow {
			return nil, fmt.Errorf("rule %d (%s): windowMs must be between 1 and %d", i, r.label, maxRateWindow.Milliseconds())
		}
		rules = append(rules, r)
	}
	return rules, nil
}

// parseRateLabel parses the label grammar above.
func parseRateLabel(label string) (*rateRule, error) {
	l := strings.TrimSpace(label)
	r := &rateRule{label: l}
	if i := strings.LastIndexByte(l, '@'); i >= 0 {
		aud, ok := rateAudiences[l[i+1:]]
		if !ok {
			return nil, fmt.Errorf("label %q: audience must be guest, auth, user or admin", label)
		}
		r.audience, l = aud, l[:i]
	}
	if i := strings.LastIndexByte(l, ':'); i >= 0 {
		act, ok := rateActions[l[i+1:]]
		if !ok {
			return nil, fmt.Errorf("label %q: action must be *, auth, create, read, update or delete", label)
		}
		r.action, l = act, l[:i]
	}
	switch {
	case l == "*":
		r.anyPath = true
	case strings.HasPrefix(l, "/"):
		r.prefix = strings.TrimSuffix(l, "*")
		r.subtree = len(r.prefix) == len(l)
		if strings.ContainsAny(r.prefix, "*:@ \t?#") {
			return nil, fmt.Errorf("label %q: a path may hold \"*\" only at its end", label)
		}
		r.rank = 4 * (len(r.prefix) + 1)
	default:
		return nil, fmt.Errorf("label %q: the path must be \"*\" or start with \"/\"", label)
	}
	switch r.audience {
	case audAuth:
		r.rank++
	case audGuest, audUser, audAdmin:
		r.rank += 2
	}
	return r, nil
}

func (r *rateRule) matchesPath(path string) bool {
	if r.anyPath {
		return true
	}
	if !strings.HasPrefix(path, r.prefix) {
		return false
	}
	return !r.subtree || len(path) == len(r.prefix) || strings.HasSuffix(r.prefix, "/") || path[len(r.prefix)] == '/'
}

// pick returns the rules that charge a request: the most specific rule of
// action "*" and the most specific of action act (either may be nil).
func (set *rateRuleSet) pick(path string, act rateAction, aud rateAudience) (general, specific *rateRule) {
	for _, r := range set.rules {
		var cur **rateRule
		switch r.action {
		case actAny:
			cur = &general
		case act:
			cur = &specific
		default:
			continue
		}
		if (*cur != nil && (*cur).rank >= r.rank) || !r.audience.matches(aud) || !r.matchesPath(path) {
			continue
		}
		*cur = r
	}
	return general, specific
}

// requestAction classifies r for rule matching (path is r.URL.Path).
func requestAction(method, path string) rateAction {
	switch method {
	case http.MethodPost:
		if strings.HasPrefix(path, "/api/v1/auth/") || strings.HasPrefix(path, "/api/v1/admin/auth/") ||
			path == "/api/v1/admin/setup" {
			return actAuth
		}
		if path == flagsEvaluatePath {
			return actRead // a POST only to carry the context: it changes nothing
		}
		return actCreate
	case http.MethodPut, http.MethodPatch:
		return actUpdate
	case http.MethodDelete:
		return actDelete
	case http.MethodGet:
		// Beginning an OAuth2 sign-in stores the authorization through
		// the log: it counts as a sign-in.
		if strings.HasPrefix(path, "/api/v1/auth/") && strings.HasSuffix(path, "/oauth2/authorize") {
			return actAuth
		}
	}
	return actRead
}

// rateSkipped reports whether path is never limited: SPEC.md's /_/*,
// /realtime, health and admin-log endpoints.
func rateSkipped(path string) bool {
	if strings.HasPrefix(path, "/_/") {
		return true
	}
	for _, p := range rateSkipPaths {
		if strings.HasPrefix(path, p) && (len(path) == len(p) || path[len(p)] == '/') {
			return true
		}
	}
	return false
}

var rateSkipPaths = []string{
	"/realtime",
	"/api/v1/realtime",
	"/api/realtime",
	"/api/v1/_",
	"/api/v1/admin/logs",
	"/api/v1/admin/audit-log",
}
