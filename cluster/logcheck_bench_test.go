package cluster_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"

	"svcd/cluster"
)

// BenchmarkVerifyLog10k is the cost of the start's check of the Raft log
// (VerifyLog does what a start does before Raft reads the log) on 10,000
// command entries of about 300 bytes, a record create's size.
func BenchmarkVerifyLog10k(b *testing.B) {
	dir := b.TempDir()
	writeBenchLog(b, filepath.Join(dir, "raft.db"), 10_000, 300)
	b.ResetTimer()
	for b.Loop() {
		rep, err := cluster.VerifyLog(dir)
		if err != nil || rep.Last != 10_000 {
			b.Fatalf("VerifyLog: %+v, %v", rep, err)
		}
	}
}

// TestVerifyLogCost logs what the check costs on 10,000 entries (the
// figure of docs/operations.md) and fails only when it is absurd.
func TestVerifyLogCost(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a log of 10,000 entries")
	}
	dir := t.TempDir()
	writeBenchLog(t, filepath.Join(dir, "raft.db"), 10_000, 300)
	var best time.Duration
	for range 3 {
		rep, err := cluster.VerifyLog(dir)
		if err != nil {
			t.Fatal(err)
		}
		if best == 0 || rep.Took < best {
			best = rep.Took
		}
	}
	t.Logf("checking 10,000 entries of 300 bytes took %s (best of 3)", best)
	if best > 5*time.Second {
		t.Fatalf("the check of 10,000 entries took %s", best)
	}
}

// writeBenchLog writes n command entries of about size bytes in term 1.
func writeBenchLog(tb testing.TB, path string, n, size int) {
	tb.Helper()
	logs, err := raftboltdb.New(raftboltdb.Options{Path: path, NoSync: true})
	if err != nil {
		tb.Fatal(err)
	}
	defer logs.Close()
	if err := logs.SetUint64([]byte("CurrentTerm"), 1); err != nil {
		tb.Fatal(err)
	}
	pad := make([]byte, size)
	for i := range pad {
		pad[i] = 'a' + byte(i%26)
	}
	batch := make([]*raft.Log, 0, 256)
	for i := 1; i <= n; i++ {
		payload := fmt.Sprintf(`{"collection":"items","id":"r%09d","data":"%s"}`, i, pad[:size-60])
		batch = append(batch, &raft.Log{Index: uint64(i), Term: 1, Type: raft.LogCommand, Data: put(payload).Encode()})
		if len(batch) == cap(batch) || i == n {
			if err := logs.StoreLogs(batch); err != nil {
				tb.Fatal(err)
			}
			batch = batch[:0]
		}
	}
}
