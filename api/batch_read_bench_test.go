package api_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// BenchmarkWriteUnderReadBatches: the latency of single creates (one
// client, one after the other) while 8 clients send 100-operation
// read-only batches of filtered lists over 4,000 records without pause
// (docs/benchmarks.md, "Writes beside read-only batches"; issue 13,
// finding 5). Each iteration is one create; p50/p99 are reported.
func BenchmarkWriteUnderReadBatches(b *testing.B) {
	s, h := benchBatchNode(b)
	for i := 0; i < 4000; i += 100 {
		var sb strings.Builder
		sb.WriteString(`{"requests":[`)
		for j := i; j < i+100; j++ {
			if j > i {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, `{"method":"POST","url":"/api/v1/bench","body":{"title":"title %05d","n":%d}}`, j, j)
		}
		sb.WriteString(`]}`)
		if st, out, err := post(s.Client, s.URL+batchURL, sb.String(), h); err != nil || st != http.StatusOK {
			b.Fatalf("seed: %d %s %v", st, out, err)
		}
	}
	list := "/api/v1/bench?perPage=30&filter=" + url.QueryEscape(`title ~ "9"`) + "&sort=-title"
	var sb strings.Builder
	sb.WriteString(`{"requests":[`)
	for i := range 100 {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"method":"GET","url":%q}`, list)
	}
	sb.WriteString(`]}`)
	reads := sb.String()

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var batches sync.Map
	for c := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := 0
			for {
				select {
				case <-stop:
					batches.Store(c, n)
					return
				default:
				}
				if st, _, err := post(s.Client, s.URL+batchURL, reads, nil); err == nil && st == http.StatusOK {
					n++
				}
			}
		}()
	}
	time.Sleep(500 * time.Millisecond) // the readers are running
	lat := make([]time.Duration, 0, b.N)
	i := 0
	start := time.Now()
	for b.Loop() {
		t0 := time.Now()
		if st, out, err := post(s.Client, s.URL+"/api/v1/bench", fmt.Sprintf(`{"title":"w%d","n":%d}`, i, i), h); err != nil || st != http.StatusCreated {
			b.Fatalf("create: %d %s %v", st, out, err)
		}
		lat = append(lat, time.Since(t0))
		i++
	}
	elapsed := time.Since(start)
	close(stop)
	wg.Wait()
	total := 0
	batches.Range(func(_, v any) bool { total += v.(int); return true })
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(total)/elapsed.Seconds(), "read-batches/s")
}
