package jepsen_test

import (
	"context"
	"net/http"
	"testing"

	"svcd/jepsen/harness"
)

// TestRateLimitOnByDefault: the released binary limits requests unless
// SVC_RATE_ENABLED=0 (the harness turns it off for the other tests): the
// eleventh sign-in attempt from one address within 3 s is a 429 with
// Retry-After; the probes are never limited.
func TestRateLimitOnByDefault(t *testing.T) {
	skipShort(t)
	node := &harness.Node{Name: "n1"}
	node.Start(t, t.TempDir(), "SVC_RATE_ENABLED=1")
	waitReady(t, node)
	cl := node.Client()
	ctx := context.Background()
	var codes []int
	for range 12 {
		// No password: the sign-in is refused before any hashing, so the
		// twelve arrive within the window however loaded the machine is
		// (the limiter charges a request before its handler runs).
		resp, err := cl.Do(ctx, "POST", "/api/v1/admin/auth/login", map[string]any{"email": "a@b.c"})
		if err != nil {
			t.Fatal(err)
		}
		codes = append(codes, resp.Status)
		if resp.Status == http.StatusTooManyRequests && resp.Header.Get("Retry-After") == "" {
			t.Fatal("429 without Retry-After")
		}
	}
	if codes[0] == http.StatusTooManyRequests || codes[0] >= 500 || codes[11] != http.StatusTooManyRequests {
		t.Fatalf("sign-in answers: %v (want a refusal first, 429 by the twelfth)", codes)
	}
	for range 20 {
		if resp, err := cl.Do(ctx, "GET", "/_/health", nil); err != nil || resp.Status != http.StatusOK {
			t.Fatalf("probe limited: %v %v", resp, err)
		}
	}
}
