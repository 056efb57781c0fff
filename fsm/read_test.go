package fsm_test

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"svcd/fsm"
)

func TestViewTxSeesOneState(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t, filepath.Join(t.TempDir(), "fsm.db"), nil)
	mustApply(t, s, ddlEntry(1, kvDDL), putEntry(2, "a", "1"))

	count := func(r *fsm.Reader) int {
		var n int
		if err := r.QueryRow(`SELECT count(*) FROM kv`).Scan(&n); err != nil {
			t.Errorf("count: %v", err)
		}
		return n
	}
	var inTx [2]int
	err := s.ViewTx(context.Background(), func(r *fsm.Reader) error {
		inTx[0] = count(r)
		mustApply(t, s, putEntry(3, "b", "2")) // commits while the read is open
		inTx[1] = count(r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if inTx != [2]int{1, 1} {
		t.Errorf("counts inside ViewTx = %v, want [1 1]", inTx)
	}
	var plain [2]int
	err = s.View(context.Background(), func(r *fsm.Reader) error {
		plain[0] = count(r)
		mustApply(t, s, putEntry(4, "c", "3"))
		plain[1] = count(r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if plain != [2]int{2, 3} {
		t.Errorf("counts inside View = %v, want [2 3]", plain)
	}
}

// TestViewTxConcurrentFirstUse runs as many ViewTx as the reader pool has
// connections, each preparing a statement the cache has not seen yet.
func TestViewTxConcurrentFirstUse(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t, filepath.Join(t.TempDir(), "fsm.db"), nil)
	n := max(4, runtime.GOMAXPROCS(0)*2) // the reader pool size (db.go)
	var began sync.WaitGroup
	began.Add(n)
	errs := make(chan error, n)
	for i := range n {
		go func() {
			errs <- s.ViewTx(context.Background(), func(r *fsm.Reader) error {
				began.Done()
				began.Wait() // every pool connection is now held by a ViewTx
				var got int
				if err := r.QueryRow(fmt.Sprintf(`SELECT %d`, i)).Scan(&got); err != nil {
					return err
				}
				if got != i {
					return fmt.Errorf("got %d, want %d", got, i)
				}
				return nil
			})
		}()
	}
	deadline := time.After(opTimeout)
	for range n {
		select {
		case err := <-errs:
			if err != nil {
				t.Error(err)
			}
		case <-deadline:
			t.Fatalf("%d concurrent ViewTx did not finish within %v: preparing a new statement waits for a free pool connection while every connection is held by a ViewTx", n, opTimeout)
		}
	}
}
