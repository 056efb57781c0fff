package jepsen_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"svcd/jepsen/harness"
)

// readyTimeout bounds every start and restart of a node.
const readyTimeout = 20 * time.Second

// itemsCollection is the collection both tests write: anyone may create and
// view, so only the write path is under test.
const itemsCollection = `{"name":"items","type":"base","fields":[` +
	`{"name":"seq","type":"number","required":true},{"name":"writer","type":"text"}],` +
	`"view_rule":"","create_rule":""}`

func skipShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("jepsen: starts, kills and restarts real svcd processes; skipped in -short mode")
	}
}

// waitReady waits for /_/ready and returns how long it took.
func waitReady(t *testing.T, n *harness.Node) time.Duration {
	t.Helper()
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	if err := n.WaitReady(ctx); err != nil {
		t.Fatalf("node not ready within %s: %v", readyTimeout, err)
	}
	return time.Since(start)
}

func createItems(t *testing.T, admin *harness.Client) {
	t.Helper()
	resp, err := admin.Do(context.Background(), "POST", "/api/v1/admin/collections", []byte(itemsCollection))
	if err != nil {
		t.Fatalf("create collection: %v", err)
	}
	if resp.Status != http.StatusCreated {
		t.Fatalf("create collection: %s", resp)
	}
}
