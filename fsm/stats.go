package fsm

import (
	"errors"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/mattn/go-sqlite3"
)

// batchStats keeps a window of recent batch sizes (commands per SQLite
// transaction) for the metrics snapshot.
type batchStats struct {
	mu       sync.Mutex
	batches  uint64
	commands uint64
	window   [1024]uint16
	n        int
	// busy counts SQLITE_BUSY and SQLITE_LOCKED answers met while applying.
	busy atomic.Uint64
}

// noteError counts err when SQLite answered busy or locked.
func (b *batchStats) noteError(err error) {
	var se sqlite3.Error
	if errors.As(err, &se) && (se.Code == sqlite3.ErrBusy || se.Code == sqlite3.ErrLocked) {
		b.busy.Add(1)
	}
}

// BusyErrors is how many times applying met SQLITE_BUSY or SQLITE_LOCKED
// (each one stalls and retries the batch, stall.go).
func (s *Store) BusyErrors() uint64 { return s.stats.busy.Load() }

func (b *batchStats) record(commands int) {
	if commands == 0 {
		return
	}
	b.mu.Lock()
	b.batches++
	b.commands += uint64(commands)
	b.window[b.n%len(b.window)] = uint16(min(commands, 65535))
	b.n++
	b.mu.Unlock()
}

// BatchStats summarises how many commands shared a transaction.
type BatchStats struct {
	Batches  uint64  `json:"fsm_batches_total"`
	Commands uint64  `json:"fsm_commands_total"`
	P50      float64 `json:"fsm_batch_commands_p50"`
	P99      float64 `json:"fsm_batch_commands_p99"`
}

// BatchStats returns totals and percentiles over the last 1024 batches.
func (s *Store) BatchStats() BatchStats {
	b := &s.stats
	b.mu.Lock()
	n := min(b.n, len(b.window))
	w := make([]int, n)
	for i := 0; i < n; i++ {
		w[i] = int(b.window[i])
	}
	out := BatchStats{Batches: b.batches, Commands: b.commands}
	b.mu.Unlock()
	if n > 0 {
		sort.Ints(w)
		out.P50 = float64(w[n/2])
		out.P99 = float64(w[min(n-1, n*99/100)])
	}
	return out
}
