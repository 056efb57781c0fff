package api_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"svcd/api/apitest"
)

const webhooksURL = "/api/v1/admin/webhooks"

// received is one request a receiver got.
type received struct {
	URI    string // path and query
	Header http.Header
	Body   []byte
	At     time.Time
}

// payload decodes the delivery body.
func (r received) payload(t testing.TB) map[string]any {
	t.Helper()
	return apitest.DecodeMap(t, r.Body)
}

// receiver is a real HTTP server on loopback that records every request
// and answers with what respond says (200 and "ok" by default).
type receiver struct {
	*httptest.Server
	mu      sync.Mutex
	got     []received
	respond func(n int, w http.ResponseWriter, r *http.Request) // n counts requests from 1
}

func newReceiver(t testing.TB, respond func(n int, w http.ResponseWriter, r *http.Request)) *receiver {
	rc := &receiver{respond: respond}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got = append(rc.got, received{URI: r.URL.RequestURI(), Header: r.Header.Clone(), Body: body, At: time.Now()})
		n := len(rc.got)
		rc.mu.Unlock()
		if rc.respond != nil {
			rc.respond(n, w, r)
			return
		}
		w.Write([]byte("ok"))
	}))
	t.Cleanup(rc.Close)
	return rc
}

// requests is a copy of what was received so far.
func (rc *receiver) requests() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.got...)
}

// waitRequests waits until the receiver got at least n requests.
func (rc *receiver) waitRequests(t testing.TB, n int) []received {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		got := rc.requests()
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("receiver got %d requests, want %d", len(got), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// startWebhookNode starts a node whose dispatcher ticks fast and whose
// egress guard lets deliveries reach loopback receivers.
func startWebhookNode(t testing.TB, opts apitest.Options) *apitest.Server {
	t.Helper()
	if opts.WebhookInterval == 0 {
		opts.WebhookInterval = 50 * time.Millisecond
	}
	s := apitest.Start(t, opts)
	s.MustAdmin(t, http.StatusOK, http.MethodPatch, settingsURL, map[string]any{"hooks.http.allow": "127.0.0.1/32"})
	return s
}

// createWebhook creates a webhook from its JSON form and returns it (with
// its secret).
func createWebhook(t testing.TB, s *apitest.Server, def map[string]any) map[string]any {
	t.Helper()
	return apitest.Obj(t, s.MustAdmin(t, http.StatusCreated, http.MethodPost, webhooksURL, def)["data"])
}

// deliveries lists a webhook's deliveries, newest first.
func deliveries(t testing.TB, s *apitest.Server, id string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, d := range apitest.List(t, s.MustAdmin(t, http.StatusOK, http.MethodGet, webhooksURL+"/"+id+"/deliveries", nil)["data"]) {
		out = append(out, apitest.Obj(t, d))
	}
	return out
}

// waitDelivery waits until the webhook's delivery id (the newest when
// id is "") satisfies ok, and returns it.
func waitDelivery(t testing.TB, s *apitest.Server, hook, id string, ok func(d map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var last map[string]any
	for {
		for _, d := range deliveries(t, s, hook) {
			if id == "" || d["id"] == id {
				last = d
				break
			}
		}
		if last != nil && ok(last) {
			return last
		}
		if time.Now().After(deadline) {
			t.Fatalf("delivery %q of %s: condition not reached; last %v", id, hook, last)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func inState(want string) func(map[string]any) bool {
	return func(d map[string]any) bool { return d["status"] == want }
}

// checkSignature verifies a delivery's signature with secret as a receiver
// would, computed here from SPEC.md's definition (sha256= and the hex
// HMAC-SHA-256 of "<x-svc-timestamp>.<raw body>", the secret string as
// the key), with the timestamp within 300 s of now.
func checkSignature(t testing.TB, r received, secret string, now time.Time) {
	t.Helper()
	ts := r.Header.Get("X-Svc-Timestamp")
	n, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || n < now.Unix()-300 || n > now.Unix()+300 {
		t.Errorf("x-svc-timestamp %q is not within 300 s of %d", ts, now.Unix())
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts + "." + string(r.Body)))
	want := "sha256=" + hex.EncodeToString(mac.Sum(nil))
	if got := r.Header.Get("X-Svc-Signature"); !hmac.Equal([]byte(got), []byte(want)) {
		t.Errorf("x-svc-signature %q, want %q (body %s)", got, want, r.Body)
	}
}

func jsonString(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
