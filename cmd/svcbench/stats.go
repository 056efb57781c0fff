package main

import (
	"math"
	"slices"
	"time"
)

// Summary describes a latency distribution.
type Summary struct {
	Count int
	Min   time.Duration
	Mean  time.Duration
	P50   time.Duration
	P95   time.Duration
	P99   time.Duration
	Max   time.Duration
}

// percentile returns the nearest-rank p-th percentile (0 < p <= 100) of an
// ascending slice, or 0 for an empty slice. p <= 0 yields the minimum.
func percentile(sorted []time.Duration, p float64) time.Duration {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	if p <= 0 {
		return sorted[0]
	}
	if p >= 100 {
		return sorted[n-1]
	}
	rank := int(math.Ceil(p / 100 * float64(n)))
	if rank < 1 {
		rank = 1
	}
	if rank > n {
		rank = n
	}
	return sorted[rank-1]
}

// mergeLatencies concatenates the per-client latency slices into one slice.
func mergeLatencies(parts [][]time.Duration) []time.Duration {
	total := 0
	for _, p := range parts {
		total += len(p)
	}
	out := make([]time.Duration, 0, total)
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// summarize sorts lat in place and returns its summary.
func summarize(lat []time.Duration) Summary {
	if len(lat) == 0 {
		return Summary{}
	}
	slices.Sort(lat)
	var sum float64
	for _, d := range lat {
		sum += float64(d)
	}
	return Summary{
		Count: len(lat),
		Min:   lat[0],
		Mean:  time.Duration(sum / float64(len(lat))),
		P50:   percentile(lat, 50),
		P95:   percentile(lat, 95),
		P99:   percentile(lat, 99),
		Max:   lat[len(lat)-1],
	}
}

// ServerFigures are server-side costs over a measured phase, derived from
// two metrics snapshots. Nil fields are unknown (endpoint or figure missing).
type ServerFigures struct {
	CPUPerReqMicros *float64 // process CPU time per request, µs
	CPUSeconds      *float64 // process CPU time over the phase (user+system)
	CmdsPerTxn      *float64 // FSM commands per SQLite transaction (batch)
	BatchCmdsP50    *float64 // server-reported p50 commands per batch
	BatchCmdsP99    *float64 // server-reported p99 commands per batch
}

// serverDelta computes ServerFigures from snapshots taken before and after
// a phase of requests requests. A changed pid (restart) voids the deltas.
func serverDelta(before, after *serverMetrics, requests int64) ServerFigures {
	var f ServerFigures
	if before == nil || after == nil {
		return f
	}
	f.BatchCmdsP50 = after.BatchCmdsP50
	f.BatchCmdsP99 = after.BatchCmdsP99
	if before.PID != nil && after.PID != nil && *before.PID != *after.PID {
		return f
	}
	if before.CPUSeconds != nil && after.CPUSeconds != nil && requests > 0 {
		if d := *after.CPUSeconds - *before.CPUSeconds; d >= 0 {
			v := d * 1e6 / float64(requests)
			f.CPUPerReqMicros, f.CPUSeconds = &v, &d
		}
	}
	if before.FSMBatches != nil && after.FSMBatches != nil &&
		before.FSMCommands != nil && after.FSMCommands != nil {
		db := *after.FSMBatches - *before.FSMBatches
		dc := *after.FSMCommands - *before.FSMCommands
		if db > 0 && dc >= 0 {
			v := dc / db
			f.CmdsPerTxn = &v
		}
	}
	return f
}

// nodesDelta is serverDelta over several nodes: the CPU and FSM deltas are
// summed over them, so cpu/req is the CPU time of all the nodes hit per
// request, and cmds/txn counts the commands and batches of all of them. The
// batch percentiles are the first node's. A node without metrics, or
// restarted, voids the figures.
func nodesDelta(before, after []*serverMetrics, requests int64) ServerFigures {
	if len(before) != len(after) || len(before) == 0 {
		return ServerFigures{}
	}
	if len(before) == 1 {
		return serverDelta(before[0], after[0], requests)
	}
	var cpu0, cpu1, bat0, bat1, cmd0, cmd1 optSum
	for i, b := range before {
		a := after[i]
		if b == nil || a == nil || (b.PID != nil && a.PID != nil && *b.PID != *a.PID) {
			return ServerFigures{}
		}
		cpu0.add(b.CPUSeconds)
		cpu1.add(a.CPUSeconds)
		bat0.add(b.FSMBatches)
		bat1.add(a.FSMBatches)
		cmd0.add(b.FSMCommands)
		cmd1.add(a.FSMCommands)
	}
	sb := &serverMetrics{CPUSeconds: cpu0.value(), FSMBatches: bat0.value(), FSMCommands: cmd0.value()}
	sa := &serverMetrics{CPUSeconds: cpu1.value(), FSMBatches: bat1.value(), FSMCommands: cmd1.value(),
		BatchCmdsP50: after[0].BatchCmdsP50, BatchCmdsP99: after[0].BatchCmdsP99}
	return serverDelta(sb, sa, requests)
}

// optSum adds optional figures; the sum is unknown once a term is.
type optSum struct {
	v       float64
	missing bool
}

func (s *optSum) add(v *float64) {
	if v == nil {
		s.missing = true
		return
	}
	s.v += *v
}

func (s optSum) value() *float64 {
	if s.missing {
		return nil
	}
	v := s.v
	return &v
}
