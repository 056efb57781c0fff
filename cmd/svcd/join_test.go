package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"svcd/cluster"
)

// TestJoinSignatureFollowsTheMember: the joining side signs for the node
// id the member names at GET /_/join (a signature that member's verifier
// accepts, and another member's refuses); a member that predates that
// route (405) gets the version 1 header it expects.
func TestJoinSignatureFollowsTheMember(t *testing.T) {
	const key = "k"
	body := []byte(`{"id":"n9","addr":"10.0.0.9:8300","voter":true}`)
	current := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"node_id":"n1","join_auth":2}`))
	}))
	defer current.Close()
	older := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusMethodNotAllowed)
	}))
	defer older.Close()
	ctx := context.Background()

	h, err := joinSignature(ctx, current.Client(), current.URL, key, body)
	if err != nil {
		t.Fatal(err)
	}
	if err := cluster.NewJoinVerifier(key, "n1", time.Now().Add(-time.Second)).Verify(h, time.Now(), body); err != nil {
		t.Errorf("the member refuses the join signed for it: %v", err)
	}
	if err := cluster.NewJoinVerifier(key, "n2", time.Now().Add(-time.Second)).Verify(h, time.Now(), body); err == nil {
		t.Error("another member accepts the join signed for n1")
	}

	before := time.Now()
	h, err = joinSignature(ctx, older.Client(), older.URL, key, body)
	if err != nil {
		t.Fatal(err)
	}
	// The second may tick between the two signatures.
	if h != cluster.SignJoinV1(key, before, body) && h != cluster.SignJoinV1(key, time.Now(), body) {
		t.Errorf("an older member gets %q, want the version 1 header", h)
	}
}
