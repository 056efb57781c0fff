package webhooks

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestBackoff(t *testing.T) {
	const day = 24 * 3600 * 1000
	for _, c := range []struct {
		kind           string
		delay, attempt int64
		want           int64
	}{
		{"exponential", 1000, 1, 1000},
		{"exponential", 1000, 2, 2000},
		{"exponential", 1000, 3, 4000},
		{"exponential", 1000, 10, 512000},
		{"exponential", 1000, 25, day}, // capped at 24 h
		{"exponential", day, 2, day},
		{"exponential", 0, 5, 0},
		{"fixed", 1500, 1, 1500},
		{"fixed", 1500, 7, 1500},
		{"fixed", 2 * day, 1, day},
	} {
		if got := backoffMs(c.kind, c.delay, c.attempt); got != c.want {
			t.Errorf("backoff(%s, %d, %d) = %d, want %d", c.kind, c.delay, c.attempt, got, c.want)
		}
	}
}

func TestPatterns(t *testing.T) {
	for _, c := range []struct {
		pattern, event string
		want           bool
	}{
		{"*", "posts.create", true},
		{"*", "anything", true},
		{"posts.*", "posts.create", true},
		{"posts.*", "posts.delete", true},
		{"posts.*", "postsx.create", false},
		{"posts.*", "notes.create", false},
		{"posts.create", "posts.create", true},
		{"posts.create", "posts.update", false},
		{"order.*", "order.paid.v2", true},
		{"order.paid.*", "order.paid.v2", true},
		{"order.paid.*", "order.paid", false},
		{"order", "order", true},
	} {
		if got := Matches(c.pattern, c.event); got != c.want {
			t.Errorf("Matches(%q, %q) = %v, want %v", c.pattern, c.event, got, c.want)
		}
	}
	for _, p := range []string{"", "a b", "*.create", "posts.cr*", "posts..x", ".x", "x.", strings.Repeat("a", 201)} {
		if checkPattern(p) == "" {
			t.Errorf("pattern %q accepted", p)
		}
	}
	got, msg := normalizePatterns([]string{"b.*", " a.create ", "*", "b.*"})
	if msg != "" || strings.Join(got, ",") != "*,a.create,b.*" {
		t.Errorf("normalize: %v %q", got, msg)
	}
}

func TestCleanHeaders(t *testing.T) {
	out, msg := cleanHeaders(map[string]any{
		"X-Tenant": "acme", "Authorization": "Bearer x",
		"content-type": "x", "User-Agent": "x", "X-Svc-Event": "x", "x-svc-anything": "x", "Host": "x",
		"Content-Length": "1", "Transfer-Encoding": "x", "Connection": "x", "Cookie": "x", "Proxy-Authorization": "x",
		"X-Forwarded-For": "x", "Forwarded": "x", "TE": "x", "Upgrade": "x", "Keep-Alive": "x", "Expect": "x",
		"Trailer": "x", "X-Real-IP": "x",
	})
	if msg != "" || len(out) != 2 || out["x-tenant"] != "acme" || out["authorization"] != "Bearer x" {
		t.Errorf("clean: %v %q", out, msg)
	}
	for _, bad := range []map[string]any{
		{"Bad Name": "x"}, {"X-A": 1}, {"X-A": "a\nb"}, {"X-A": "a", "x-a": "b"}, {"": "x"},
	} {
		if _, msg := cleanHeaders(bad); msg == "" {
			t.Errorf("accepted %v", bad)
		}
	}
}

func TestSignKnownValue(t *testing.T) {
	// echo -n '1700000000.{"a":1}' | openssl dgst -sha256 -hmac 'secret'
	got := Sign("secret", 1700000000, []byte(`{"a":1}`))
	if want := "sha256=49f24e537407743fa4a0242bb63b94b9a47ee99cbbe071ccd8a22550ae411686"; got != want {
		t.Fatalf("Sign = %q, want %q", got, want)
	}
	if !Verify("secret", got, "1700000000", []byte(`{"a":1}`), 1700000100, 300) {
		t.Error("Verify refuses Sign's signature")
	}
	if Verify("secret", got, "1700000000", []byte(`{"a":1}`), 1700000301, 300) {
		t.Error("Verify accepts a timestamp older than the tolerance")
	}
	if Verify("other", got, "1700000000", []byte(`{"a":1}`), 1700000000, 300) {
		t.Error("Verify accepts another secret")
	}
}

func TestCapture(t *testing.T) {
	if got := capture([]byte(strings.Repeat("a", 5000))); len(got) != CaptureLimit {
		t.Errorf("captured %d bytes", len(got))
	}
	got := capture([]byte(strings.Repeat("é", 2000)))
	if !utf8.ValidString(got) || len(got) > CaptureLimit || len(got) < CaptureLimit-1 {
		t.Errorf("captured %d bytes, valid %v", len(got), utf8.ValidString(got))
	}
	if got := capture([]byte("short")); got != "short" {
		t.Errorf("captured %q", got)
	}
}

func TestDeliveryIDs(t *testing.T) {
	a := deliveryID("whk_a", 10, 0)
	if a != deliveryID("whk_a", 10, 0) {
		t.Error("not deterministic")
	}
	seen := map[string]bool{a: true}
	for _, id := range []string{deliveryID("whk_b", 10, 0), deliveryID("whk_a", 11, 0), deliveryID("whk_a", 10, 1), deliveryID("whk_a", 1, 100)} {
		if seen[id] {
			t.Errorf("id %s repeats", id)
		}
		seen[id] = true
	}
}
