package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"svcd/api/apitest"
)

// Benchmarks of one batch of 100 creates against 100 single creates, over
// HTTP against a real node on loopback (docs/benchmarks.md, "Batch"). Each
// iteration writes 100 records; records/s is the figure to compare.

func benchBatchNode(b *testing.B) (*apitest.Server, map[string]string) {
	b.Helper()
	s := apitest.Start(b, apitest.Options{})
	s.CreateCollection(b, public(coll("bench", "base", []map[string]any{f("title", "text"), f("n", "number")})))
	return s, map[string]string{"Content-Type": "application/json"}
}

func reportRecords(b *testing.B, perOp int) {
	b.ReportMetric(float64(perOp*b.N)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkBatch100Creates: one POST /batch of 100 creates per iteration.
func BenchmarkBatch100Creates(b *testing.B) {
	s, h := benchBatchNode(b)
	var sb strings.Builder
	sb.WriteString(`{"requests":[`)
	for i := range 100 {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"method":"POST","url":"/api/v1/bench","body":{"title":"t%d","n":%d}}`, i, i)
	}
	sb.WriteString(`]}`)
	body := sb.String()
	url := s.URL + batchURL
	for b.Loop() {
		if st, out, err := post(s.Client, url, body, h); err != nil || st != http.StatusOK {
			b.Fatalf("batch: %d %s %v", st, out, err)
		}
	}
	reportRecords(b, 100)
}

// BenchmarkSingle100Creates: 100 POST /bench one after the other per
// iteration (one client: what a batch replaces).
func BenchmarkSingle100Creates(b *testing.B) {
	s, h := benchBatchNode(b)
	url := s.URL + "/api/v1/bench"
	for b.Loop() {
		for i := range 100 {
			if st, out, err := post(s.Client, url, fmt.Sprintf(`{"title":"t%d","n":%d}`, i, i), h); err != nil || st != http.StatusCreated {
				b.Fatalf("create: %d %s %v", st, out, err)
			}
		}
	}
	reportRecords(b, 100)
}

// BenchmarkSingle100CreatesParallel: the same 100 creates from 16 clients
// at once, which lets Raft group them into fewer log appends.
func BenchmarkSingle100CreatesParallel(b *testing.B) {
	s, h := benchBatchNode(b)
	url := s.URL + "/api/v1/bench"
	const clients = 16
	for b.Loop() {
		var wg sync.WaitGroup
		for c := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := c; i < 100; i += clients {
					if st, out, err := post(s.Client, url, fmt.Sprintf(`{"title":"t%d","n":%d}`, i, i), h); err != nil || st != http.StatusCreated {
						b.Errorf("create: %d %s %v", st, out, err)
						return
					}
				}
			}()
		}
		wg.Wait()
	}
	reportRecords(b, 100)
}
