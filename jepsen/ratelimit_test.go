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
	// No password: the sign-in is refused without the cost of a real
	// one, so the attempts arrive faster than the bucket refills (10
	// per 3 s, a token every 300 ms) however loaded the machine is (the
	// limiter charges a request before its handler runs). The first ten
	// pass; a 429 follows (and, a token refilled, an attempt may pass
	// again).
	var codes []int
	first := -1
	for i := 0; i < 20 && first < 0; i++ {
		resp, err := cl.Do(ctx, "POST", "/api/v1/admin/auth/login", map[string]any{"email": "a@b.c"})
		if err != nil {
			t.Fatal(err)
		}
		codes = append(codes, resp.Status)
		if resp.Status == http.StatusTooManyRequests {
			first = i
			if resp.Header.Get("Retry-After") == "" {
				t.Fatal("429 without Retry-After")
			}
		}
	}
	if first < 10 || codes[0] >= 500 {
		t.Fatalf("sign-in answers: %v (want ten refusals of the sign-in, then a 429)", codes)
	}
	for range 20 {
		if resp, err := cl.Do(ctx, "GET", "/_/health", nil); err != nil || resp.Status != http.StatusOK {
			t.Fatalf("probe limited: %v %v", resp, err)
		}
	}
}
