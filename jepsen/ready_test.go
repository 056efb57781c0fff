package jepsen_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"svcd/jepsen/harness"
)

// TestReadyMeansCaughtUp: once /_/ready answers 200 after a restart, every
// write the node acknowledged before the crash is readable, even when the
// SQLite files were lost and the whole log must be replayed.
func TestReadyMeansCaughtUp(t *testing.T) {
	skipShort(t)
	dir := t.TempDir()
	node := &harness.Node{Name: "n1"}
	node.Start(t, dir)
	waitReady(t, node)
	admin := node.Client().WithToken(node.Setup(t))
	createItems(t, admin)
	const writers, each = 8, 400
	var wg sync.WaitGroup
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := &snapWriter{t: t, c: admin, n: g * each}
			for range each {
				w.write()
			}
		}()
	}
	wg.Wait()
	for round := range 3 {
		if err := node.Kill(); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"data.db", "data.db-wal", "data.db-shm"} {
			os.Remove(filepath.Join(dir, f))
		}
		node.Restart(t)
		// Poll tightly so the first 200 is seen as soon as it is served.
		deadline := time.Now().Add(readyTimeout)
		for {
			resp, err := admin.Do(context.Background(), "GET", "/_/ready", nil)
			if err == nil && resp.Status == 200 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("round %d: not ready within %s", round, readyTimeout)
			}
			time.Sleep(time.Millisecond)
		}
		resp, err := admin.Do(context.Background(), "GET", "/api/v1/items?perPage=1", nil)
		if err != nil {
			t.Fatal(err)
		}
		var list struct{ TotalItems int }
		if err := resp.JSON(&list); err != nil {
			t.Fatalf("round %d: %s", round, resp)
		}
		if list.TotalItems != writers*each {
			t.Errorf("round %d: right after /_/ready answered 200, %d of %d acknowledged records are readable",
				round, list.TotalItems, writers*each)
		}
	}
}
