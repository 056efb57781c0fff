package realtime

import (
	"context"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"svcd/engine"
	"svcd/fsm"
)

// BenchmarkFanout100 is the hub's share of realtime delivery: 100
// connections subscribed to one collection, each drained by its own
// goroutine that writes every message to /dev/null (one system call, as
// a transport's flush is), while events are observed one at a time every
// 500 µs (2,000 writes/s; b.N events). It reports the delay from Observe
// to each connection's write (p50, p99) and how long Observe itself takes
// at the 99th percentile (it runs on the state machine's apply path).
func BenchmarkFanout100(b *testing.B) {
	const conns, every = 100, time.Millisecond
	h := NewHub(Options{Auth: fakeAuth{}})
	sink, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer sink.Close()
	sent := make([]atomic.Int64, b.N+1) // Observe's start per index, unix ns
	var (
		mu    sync.Mutex
		lat   []time.Duration
		wg    sync.WaitGroup
		ready sync.WaitGroup
	)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for range conns {
		c := h.Connect(engine.Principal{})
		if _, e := c.Subscribe([]string{"posts"}, ""); e != nil {
			b.Fatal(e)
		}
		c.Start()
		ready.Add(1)
		wg.Go(func() {
			defer c.Close()
			mine := make([]time.Duration, 0, b.N)
			ready.Done()
			for got := 0; got < b.N; {
				msgs, err := c.Next(ctx)
				if err != nil {
					break
				}
				for _, m := range msgs {
					if _, err := sink.Write([]byte(m.EventID)); err != nil {
						b.Error(err)
					}
				}
				now := time.Now().UnixNano()
				for _, m := range msgs {
					i, _ := strconv.Atoi(m.EventID)
					mine = append(mine, time.Duration(now-sent[i].Load()))
				}
				got += len(msgs)
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		})
	}
	ready.Wait()
	observe := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	tick := time.Now()
	for i := 1; i <= b.N; i++ {
		time.Sleep(time.Until(tick))
		tick = tick.Add(every)
		t0 := time.Now()
		sent[i].Store(t0.UnixNano())
		h.Observe([]fsm.Event{rec(uint64(i), engine.EvRecordCreate, "posts", "r"+strconv.Itoa(i), int64(i))})
		observe = append(observe, time.Since(t0))
	}
	wg.Wait()
	b.StopTimer()
	if len(lat) != conns*b.N {
		b.Fatalf("%d deliveries, want %d", len(lat), conns*b.N)
	}
	slices.Sort(lat)
	slices.Sort(observe)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "deliver-p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "deliver-p99-µs")
	b.ReportMetric(float64(observe[len(observe)*99/100].Microseconds()), "observe-p99-µs")
}
