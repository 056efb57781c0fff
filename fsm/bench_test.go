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

// BenchmarkEnvelope encodes and decodes (verifying the CRC-32C of version
// 2) commands of a single create's, a batch's and a CSV chunk's size.
func BenchmarkEnvelope(b *testing.B) {
	for _, size := range []int{300, 30_000, 300_000} {
		payload := make([]byte, size)
		for i := range payload {
			payload[i] = byte('a' + i%26)
		}
		b.Run(fmt.Sprintf("payload=%d", size), func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				if _, err := fsm.Decode(fsm.Command{Type: 20, Version: 1, Payload: payload}.Encode()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
