package suite

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// Report is the record of one run.
type Report struct {
	Workload string `json:"workload"`
	Nodes    int    `json:"nodes"`
	Clients  int    `json:"clients"`
	Seed     uint64 `json:"seed"`
	Duration string `json:"duration"`
	// Ops counts operations by kind and outcome ("write ok", "read info").
	Ops map[string]int `json:"ops"`
	// Faults counts how many times each fault was applied.
	Faults map[string]int `json:"faults"`
	// Elections is how many terms passed; LeaderChanges how many times
	// a different node became leader.
	Elections      int            `json:"elections"`
	LeaderChanges  int            `json:"leader_changes"`
	Unavailability Unavailability `json:"unavailability"`
	Verdict        Verdict        `json:"verdict"`
}

// Unavailability describes the windows of at least a threshold in which
// no operation completed successfully.
type Unavailability struct {
	Windows int    `json:"windows"`
	P50     string `json:"p50"`
	Max     string `json:"max"`
}

// unavailability finds the gaps between successful completions (and the
// run's start and end) of at least threshold.
func unavailability(ops []opRecord, start, end time.Time, threshold time.Duration) Unavailability {
	var ok []time.Time
	for _, o := range ops {
		if o.outcome == OK {
			ok = append(ok, o.ret)
		}
	}
	sort.Slice(ok, func(i, j int) bool { return ok[i].Before(ok[j]) })
	ok = append(append([]time.Time{start}, ok...), end)
	var gaps []time.Duration
	for i := 1; i < len(ok); i++ {
		if g := ok[i].Sub(ok[i-1]); g >= threshold {
			gaps = append(gaps, g)
		}
	}
	u := Unavailability{Windows: len(gaps), P50: "0s", Max: "0s"}
	if len(gaps) > 0 {
		slices.Sort(gaps)
		u.P50 = gaps[(len(gaps)-1)/2].Round(time.Millisecond).String()
		u.Max = gaps[len(gaps)-1].Round(time.Millisecond).String()
	}
	return u
}

// Summary is the report in one line.
func (r Report) Summary() string {
	v := r.Verdict
	s := fmt.Sprintf("valid=%v acknowledged=%d lost=%d duplicates=%d", v.Valid, v.Acknowledged, v.Lost, v.Duplicates)
	if v.Stale > 0 {
		s += fmt.Sprintf(" stale=%d", v.Stale)
	}
	if v.Corrupted > 0 {
		s += fmt.Sprintf(" corrupted=%d", v.Corrupted)
	}
	if v.Linearizable != "" {
		s += " linearizable=" + v.Linearizable
	}
	return s
}

// String is the report as the test log shows it.
func (r Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "== jepsen %s: %d nodes, %d clients, %s, seed %d\n", r.Workload, r.Nodes, r.Clients, r.Duration, r.Seed)
	fmt.Fprintf(&b, "verdict: %s\n", r.Summary())
	fmt.Fprintf(&b, "ops: %s\n", counts(r.Ops))
	fmt.Fprintf(&b, "faults applied: %s\n", counts(r.Faults))
	fmt.Fprintf(&b, "elections (terms): %d, leader changes: %d\n", r.Elections, r.LeaderChanges)
	u := r.Unavailability
	fmt.Fprintf(&b, "unavailability windows >= 1s: %d (p50 %s, max %s)\n", u.Windows, u.P50, u.Max)
	for _, n := range r.Verdict.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	if r.Verdict.Visualization != "" {
		fmt.Fprintf(&b, "visualization: %s\n", r.Verdict.Visualization)
	}
	return b.String()
}

func counts(m map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// write saves the report as <dir>/<workload>-<seed>.json.
func (r Report) write(t *testing.T, dir string) {
	b, _ := json.MarshalIndent(r, "", "  ")
	path := filepath.Join(dir, fmt.Sprintf("%s-%d.json", r.Workload, r.Seed))
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		t.Errorf("jepsen: report: %v", err)
		return
	}
	t.Logf("jepsen: report %s", path)
}
