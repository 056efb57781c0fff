package api_test

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"svcd/api/apitest"
)

// TestBackupUnderWriteLoad: backups downloaded while clients keep writing
// open and pass PRAGMA integrity_check, and each holds exactly the writes
// acknowledged at or below the index it names: every one of them, none
// above it. The writes' latencies while a backup is taken and while none
// is are logged (the copy reads from a read transaction: it never blocks
// the apply path).
func TestBackupUnderWriteLoad(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	tok := s.AdminToken(t)
	s.CreateCollection(t, public(coll("items", "base", []map[string]any{f("body", "text")})))
	pad := strings.Repeat("x", 400)
	for b := range 40 { // 4,000 rows, about 2 MB, for the copy to take a while
		entries := make([]map[string]any, 100)
		for i := range entries {
			entries[i] = map[string]any{"method": "POST", "url": "/api/v1/items", "body": map[string]any{"id": fmt.Sprintf("seed%06d%05d", b, i), "body": pad}}
		}
		if status, out, _ := runBatch(t, s, nil, entries); status != http.StatusOK {
			t.Fatalf("seed: %d %v", status, out)
		}
	}

	type ack struct {
		id  string
		idx uint64
	}
	var (
		mu      sync.Mutex
		acks    []ack
		during  []time.Duration
		outside []time.Duration
		backing atomic.Bool
		stop    atomic.Bool
		wg      sync.WaitGroup
		seq     atomic.Int64
	)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				id := fmt.Sprintf("w%dr%012d", w, seq.Add(1))
				busy := backing.Load()
				start := time.Now()
				res, body, err := s.Send("POST", "/api/v1/items", map[string]any{"id": id, "body": pad}, bearer(tok))
				took := time.Since(start)
				if err != nil || res.StatusCode != http.StatusCreated {
					t.Errorf("write %s: %v %v %s", id, err, res, body)
					return
				}
				idx, _ := strconv.ParseUint(res.Header.Get("X-Svc-Index"), 10, 64)
				mu.Lock()
				acks = append(acks, ack{id, idx})
				if busy && backing.Load() {
					during = append(during, took)
				} else if !busy {
					outside = append(outside, took)
				}
				mu.Unlock()
			}
		}()
	}
	time.Sleep(300 * time.Millisecond)
	var taken []time.Duration
	for round := range 3 {
		backing.Store(true)
		start := time.Now()
		b := downloadBackup(t, s, tok, "", nil)
		taken = append(taken, time.Since(start))
		backing.Store(false)
		db := b.open(t) // integrity_check, and the index it names
		have := map[string]bool{}
		rows, err := db.Query(`SELECT id FROM items WHERE id LIKE 'w%'`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id string
			rows.Scan(&id)
			have[id] = true
		}
		rows.Close()
		mu.Lock()
		missing, extra, below := 0, 0, 0
		for _, a := range acks {
			switch {
			case a.idx <= b.index:
				below++
				if !have[a.id] {
					missing++
				}
			case have[a.id]:
				extra++
			}
		}
		mu.Unlock()
		if missing > 0 || extra > 0 {
			t.Fatalf("backup %d at index %d: %d acknowledged writes at or below it missing, %d above it present", round, b.index, missing, extra)
		}
		if below == 0 {
			t.Fatalf("backup %d at index %d holds none of the writes under way", round, b.index)
		}
		t.Logf("backup %d: index %d, %d bytes, %d writes of the load in it, in %v", round, b.index, len(b.data), below, taken[round].Round(time.Millisecond))
		time.Sleep(200 * time.Millisecond)
	}
	stop.Store(true)
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	t.Logf("write latency while a backup was taken: %s; otherwise: %s", latencies(during), latencies(outside))
}

// latencies sums up durations: count, p50, p99, max.
func latencies(d []time.Duration) string {
	if len(d) == 0 {
		return "none"
	}
	d = slices.Clone(d)
	slices.Sort(d)
	at := func(q float64) time.Duration { return d[int(q*float64(len(d)-1))].Round(10 * time.Microsecond) }
	return fmt.Sprintf("%d writes, p50 %v, p99 %v, max %v", len(d), at(0.5), at(0.99), d[len(d)-1].Round(10*time.Microsecond))
}
