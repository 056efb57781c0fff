package api_test

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"svcd/api/apitest"
)

// TestCSVExportConstantMemory exports a large collection (200k rows, about
// 54 MB of CSV; SVCD_CSV_ROWS sets another count, at least 200k for the
// bound to mean anything) while sampling the process's live heap: the
// export must stream, so the live heap may grow by a fixed amount, never
// by anything near the export's size.
func TestCSVExportConstantMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("imports 200k rows")
	}
	rows := 200_000
	if n, err := strconv.Atoi(os.Getenv("SVCD_CSV_ROWS")); err == nil && n > 0 {
		rows = n
	}
	s := apitest.Start(t, apitest.Options{})
	s.Client.Timeout = 10 * time.Minute
	s.CreateCollection(t, coll("big", "base", []map[string]any{f("title", "text"), f("body", "text"), f("n", "number")}))

	filler := strings.Repeat("lorem ipsum ", 18) // 216 bytes
	const perImport = 100_000
	start := time.Now()
	for done := 0; done < rows; done += perImport {
		var b strings.Builder
		b.WriteString("title,body,n\n")
		for i := done; i < min(done+perImport, rows); i++ {
			fmt.Fprintf(&b, "row%d,%s,%d\n", i, filler, i)
		}
		data := importOK(t, s, "big", b.String())
		if apitest.Int(t, data["failed"]) != 0 {
			t.Fatalf("import failed rows: %v", data)
		}
	}
	t.Logf("imported %d rows in %v (%.0f rows/s)", rows, time.Since(start), float64(rows)/time.Since(start).Seconds())

	base := liveHeap()
	peakHeap := watchHeap(50 * time.Millisecond)
	req, _ := http.NewRequest(http.MethodGet, s.URL+"/api/v1/admin/export/big", nil)
	for k, v := range s.AdminHeaders(t, nil) {
		req.Header.Set(k, v)
	}
	start = time.Now()
	res, err := s.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	// Count lines and bytes without keeping them.
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64<<10), 64<<10)
	lines, size := 0, 0
	for sc.Scan() {
		lines++
		size += len(sc.Bytes()) + 1
	}
	if err := sc.Err(); err != nil && err != io.EOF {
		t.Fatalf("read export: %v", err)
	}
	elapsed := time.Since(start)
	peak := peakHeap()
	if lines != rows+1 {
		t.Fatalf("export has %d lines, want %d", lines, rows+1)
	}
	growth := int64(peak) - int64(base)
	t.Logf("exported %d rows, %.1f MB in %v (%.0f rows/s); live heap %0.1f MB before, peak growth %.1f MB",
		rows, float64(size)/1e6, elapsed, float64(rows)/elapsed.Seconds(), float64(base)/1e6, float64(growth)/1e6)
	// Holding the export would grow the heap by more than its size (the
	// CSV text and the rows behind it); streaming costs a fixed amount
	// (measured: 11-14 MB at 200k and at 1M rows, mostly not the export's).
	if limit := int64(32 << 20); growth > limit || growth > int64(size)/2 {
		t.Errorf("live heap grew by %d bytes during a %d-byte export: not streaming", growth, size)
	}
}

// watchHeap samples the live heap every interval until the function it
// returns is called, which answers the highest sample.
func watchHeap(interval time.Duration) (stop func() (peak uint64)) {
	var mu sync.Mutex
	var peak uint64
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-quit:
				return
			case <-time.After(interval):
			}
			h := liveHeap()
			mu.Lock()
			peak = max(peak, h)
			mu.Unlock()
		}
	}()
	return func() uint64 {
		close(quit)
		<-done
		mu.Lock()
		defer mu.Unlock()
		return peak
	}
}

// liveHeap is the heap in use after a collection: what is live now.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
