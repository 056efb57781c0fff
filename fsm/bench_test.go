package fsm_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"svcd/fsm"
)

// BenchmarkApplyBatch applies batches of one-row inserts and reports the
// command throughput.
func BenchmarkApplyBatch(b *testing.B) {
	for _, size := range []int{1, 16, 64} {
		b.Run(fmt.Sprintf("batch=%d", size), func(b *testing.B) {
			s, _ := openStore(b, filepath.Join(b.TempDir(), "bench.db"), nil)
			mustApply(b, s, ddlEntry(1, kvDDL), putEntry(2, "warm-up", "x")) // fails fast if applying hangs
			next := uint64(3)
			batch := make([]fsm.Entry, size)
			commands := 0
			b.ReportAllocs()
			for b.Loop() {
				for i := range batch {
					batch[i] = putEntry(next, fmt.Sprintf("k%012d", next), "value")
					next++
				}
				for _, r := range s.ApplyBatch(batch) {
					if r.Err != nil || r.Skipped {
						b.Fatalf("apply: %+v", r)
					}
				}
				commands += size
			}
			b.ReportMetric(float64(commands)/b.Elapsed().Seconds(), "commands/s")
		})
	}
}
