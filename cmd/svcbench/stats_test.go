package main

import (
	"math/rand/v2"
	"testing"
	"time"
)

func msList(vals ...int) []time.Duration {
	out := make([]time.Duration, len(vals))
	for i, v := range vals {
		out[i] = time.Duration(v) * time.Millisecond
	}
	return out
}

func TestPercentile(t *testing.T) {
	var hundred []time.Duration
	for i := 1; i <= 100; i++ {
		hundred = append(hundred, time.Duration(i)*time.Millisecond)
	}
	cases := []struct {
		name   string
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{"empty", nil, 50, 0},
		{"single p50", msList(7), 50, 7 * time.Millisecond},
		{"single p99", msList(7), 99, 7 * time.Millisecond},
		{"100 p50", hundred, 50, 50 * time.Millisecond},
		{"100 p95", hundred, 95, 95 * time.Millisecond},
		{"100 p99", hundred, 99, 99 * time.Millisecond},
		{"100 p100", hundred, 100, 100 * time.Millisecond},
		{"100 p0", hundred, 0, 1 * time.Millisecond},
		{"100 p0.5", hundred, 0.5, 1 * time.Millisecond},
		{"100 p99.9", hundred, 99.9, 100 * time.Millisecond},
		{"4 p50", msList(1, 2, 3, 4), 50, 2 * time.Millisecond},
		{"4 p51", msList(1, 2, 3, 4), 51, 3 * time.Millisecond},
		{"4 p75", msList(1, 2, 3, 4), 75, 3 * time.Millisecond},
		{"4 p99", msList(1, 2, 3, 4), 99, 4 * time.Millisecond},
		{"3 p50", msList(1, 2, 3), 50, 2 * time.Millisecond},
	}
	for _, c := range cases {
		if got := percentile(c.sorted, c.p); got != c.want {
			t.Errorf("%s: percentile(%v) = %v, want %v", c.name, c.p, got, c.want)
		}
	}
}

func TestSummarizeUnsortedMerged(t *testing.T) {
	// 1..1000ms shuffled over three "clients" of uneven size.
	var all []time.Duration
	for i := 1; i <= 1000; i++ {
		all = append(all, time.Duration(i)*time.Millisecond)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	parts := [][]time.Duration{all[:10], all[10:600], nil, all[600:]}
	merged := mergeLatencies(parts)
	if len(merged) != 1000 {
		t.Fatalf("merged %d latencies, want 1000", len(merged))
	}
	s := summarize(merged)
	want := Summary{
		Count: 1000,
		Min:   time.Millisecond,
		Mean:  500500 * time.Microsecond,
		P50:   500 * time.Millisecond,
		P95:   950 * time.Millisecond,
		P99:   990 * time.Millisecond,
		Max:   1000 * time.Millisecond,
	}
	if s != want {
		t.Errorf("summarize = %+v\nwant        %+v", s, want)
	}
	if got := summarize(nil); got != (Summary{}) {
		t.Errorf("summarize(nil) = %+v, want zero", got)
	}
}

func f64(v float64) *float64 { return &v }

func TestServerDelta(t *testing.T) {
	before := &serverMetrics{PID: f64(10), CPUSeconds: f64(2.0), FSMBatches: f64(100), FSMCommands: f64(1000)}
	after := &serverMetrics{PID: f64(10), CPUSeconds: f64(3.0), FSMBatches: f64(150), FSMCommands: f64(1620),
		BatchCmdsP50: f64(11), BatchCmdsP99: f64(30)}

	f := serverDelta(before, after, 10000)
	if f.CPUPerReqMicros == nil || *f.CPUPerReqMicros != 100 {
		t.Errorf("cpu/req = %v, want 100µs", f.CPUPerReqMicros)
	}
	if f.CmdsPerTxn == nil || *f.CmdsPerTxn != 12.4 {
		t.Errorf("cmds/txn = %v, want 12.4", f.CmdsPerTxn)
	}
	if f.BatchCmdsP50 == nil || *f.BatchCmdsP50 != 11 || f.BatchCmdsP99 == nil || *f.BatchCmdsP99 != 30 {
		t.Errorf("batch p50/p99 = %v/%v, want 11/30", f.BatchCmdsP50, f.BatchCmdsP99)
	}

	if f := serverDelta(nil, after, 10); f != (ServerFigures{}) {
		t.Errorf("missing snapshot: got %+v, want nothing", f)
	}
	restarted := *after
	restarted.PID = f64(11)
	if f := serverDelta(before, &restarted, 10); f.CPUPerReqMicros != nil || f.CmdsPerTxn != nil {
		t.Errorf("pid changed: deltas should be void, got %+v", f)
	}
	noWrites := &serverMetrics{PID: f64(10), CPUSeconds: f64(2.5), FSMBatches: f64(100), FSMCommands: f64(1000)}
	if f := serverDelta(before, noWrites, 0); f.CPUPerReqMicros != nil || f.CmdsPerTxn != nil {
		t.Errorf("no requests, no batches: got %+v, want no figures", f)
	}
	partial := &serverMetrics{CPUSeconds: f64(2.2)}
	if f := serverDelta(&serverMetrics{CPUSeconds: f64(2.0)}, partial, 1000); f.CPUPerReqMicros == nil || f.CmdsPerTxn != nil {
		t.Errorf("partial metrics: got %+v, want cpu only", f)
	}
}

func TestNodesDelta(t *testing.T) {
	node := func(pid, cpu, batches, cmds float64) *serverMetrics {
		return &serverMetrics{PID: f64(pid), CPUSeconds: f64(cpu), FSMBatches: f64(batches), FSMCommands: f64(cmds), BatchCmdsP50: f64(pid)}
	}
	before := []*serverMetrics{node(1, 1, 100, 1000), node(2, 5, 100, 1000)}
	after := []*serverMetrics{node(1, 2, 150, 1600), node(2, 5.5, 140, 1400)}
	f := nodesDelta(before, after, 1000)
	// 1.5 s of CPU over both nodes; 1000 commands in 90 batches.
	if f.CPUPerReqMicros == nil || *f.CPUPerReqMicros != 1500 {
		t.Errorf("cpu/req = %v, want 1500µs", f.CPUPerReqMicros)
	}
	if f.CmdsPerTxn == nil || *f.CmdsPerTxn < 11.11 || *f.CmdsPerTxn > 11.12 {
		t.Errorf("cmds/txn = %v, want 11.1", f.CmdsPerTxn)
	}
	if f.BatchCmdsP50 == nil || *f.BatchCmdsP50 != 1 {
		t.Errorf("batch p50 = %v, want the first node's", f.BatchCmdsP50)
	}
	if one := nodesDelta(before[:1], after[:1], 1000); *one.CPUPerReqMicros != 1000 {
		t.Errorf("one node: cpu/req = %v, want 1000µs", *one.CPUPerReqMicros)
	}
	restarted := []*serverMetrics{after[0], node(3, 5.5, 140, 1400)}
	for _, a := range [][]*serverMetrics{restarted, {after[0], nil}, after[:1]} {
		if f := nodesDelta(before, a, 1000); f != (ServerFigures{}) {
			t.Errorf("restart, missing node or mismatch: got %+v, want nothing", f)
		}
	}
	partial := []*serverMetrics{after[0], {PID: f64(2), CPUSeconds: f64(6)}}
	if f := nodesDelta(before, partial, 1000); f.CPUPerReqMicros == nil || *f.CPUPerReqMicros != 2000 || f.CmdsPerTxn != nil {
		t.Errorf("a node without FSM figures: got %+v, want cpu only", f)
	}
}
