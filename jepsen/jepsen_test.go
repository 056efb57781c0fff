package jepsen_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"svcd/jepsen/harness"
	"svcd/jepsen/suite"
)

// The fault suite runs only when asked (it needs root and a few minutes):
//
//	JEPSEN=smoke  every fault once, split over the workloads (~3.5 min;
//	              `make jepsen-smoke`, part of .ci/run)
//	JEPSEN=full   every workload against every fault (`make jepsen`)
//
// JEPSEN_TIME (full, default 5m: each of the seven runs gets JEPSEN_TIME/4
// of client time, and every fault is applied at least once per run even
// when that takes longer: the default takes about 15 min in all), JEPSEN_SEED,
// JEPSEN_NODES (default 3; full also runs the set workload on 5),
// JEPSEN_REPORT_DIR (default jepsen/reports) and JEPSEN_NODE_ENV (space-
// separated KEY=VALUE settings for every node, e.g. Raft timing) tune it.
func jepsenMode(t *testing.T) string {
	t.Helper()
	mode := os.Getenv("JEPSEN")
	if mode != "smoke" && mode != "full" {
		t.Skip("fault suite: run with JEPSEN=smoke or JEPSEN=full (make jepsen-smoke, make jepsen)")
	}
	if err := harness.NetworkSupported(); err != nil {
		t.Fatalf("fault suite: %v", err)
	}
	return mode
}

func allFaults() []suite.Fault {
	return []suite.Fault{
		suite.Kill{Leader: true}, suite.Kill{}, suite.Pause{Leader: true}, suite.Pause{},
		suite.IsolateLeader{}, suite.Halves{}, suite.Bridge{}, suite.OneWay{},
		suite.Loss{}, suite.Latency{}, suite.ClockSkew{}, suite.Membership{}, suite.DiskFull{},
		suite.Corrupt{},
	}
}

func envDuration(t *testing.T, name string, def time.Duration) time.Duration {
	if v := os.Getenv(name); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return d
	}
	return def
}

func envInt(t *testing.T, name string, def int) int {
	if v := os.Getenv(name); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return n
	}
	return def
}

func baseOptions(t *testing.T) suite.Options {
	dir := os.Getenv("JEPSEN_REPORT_DIR")
	if dir == "" {
		root, err := harness.ModuleRoot()
		if err != nil {
			t.Fatal(err)
		}
		dir = filepath.Join(root, "jepsen", "reports")
	}
	return suite.Options{
		Nodes:     envInt(t, "JEPSEN_NODES", 3),
		Seed:      uint64(envInt(t, "JEPSEN_SEED", 0)),
		ReportDir: dir,
		// Data directories on tmpfs, for the disk-full fault.
		Tmpfs: 1 << 30,
		// Other settings to compare, e.g. Raft timing.
		NodeEnv: strings.Fields(os.Getenv("JEPSEN_NODE_ENV")),
	}
}

// run is one workload under faults; the history must be valid.
func run(t *testing.T, w suite.Workload, faults []suite.Fault, opts suite.Options) suite.Report {
	t.Helper()
	rep := suite.Run(t, w, faults, opts)
	if !rep.Verdict.Valid {
		t.Errorf("jepsen %s: history is not valid (seed %d): %s", rep.Workload, rep.Seed, rep.Summary())
	}
	for _, f := range faults {
		if rep.Faults[f.Name()] == 0 {
			t.Errorf("jepsen %s: fault %s was never applied", rep.Workload, f.Name())
		}
	}
	return rep
}

// TestJepsen: the workloads under every fault, with zero acknowledged
// writes lost and zero linearizability violations.
func TestJepsen(t *testing.T) {
	mode := jepsenMode(t)
	if mode == "smoke" {
		opts := baseOptions(t)
		opts.Duration = 25 * time.Second
		t.Run("register", func(t *testing.T) {
			run(t, suite.NewRegister(), []suite.Fault{suite.Kill{Leader: true}, suite.IsolateLeader{}, suite.Pause{Leader: true}, suite.OneWay{}}, opts)
		})
		t.Run("local", func(t *testing.T) {
			run(t, suite.NewLocal(), []suite.Fault{suite.Kill{}, suite.Latency{}, suite.ClockSkew{}, suite.Pause{}, suite.Corrupt{}}, opts)
		})
		t.Run("set", func(t *testing.T) {
			run(t, suite.NewSet(), []suite.Fault{suite.Halves{}, suite.Bridge{}, suite.Membership{}, suite.Loss{}, suite.DiskFull{}}, opts)
		})
		t.Run("realtime", func(t *testing.T) {
			rt := opts
			rt.Duration = 15 * time.Second
			run(t, suite.NewRealtime(), []suite.Fault{suite.Kill{}, suite.Pause{Leader: true}}, rt)
		})
		t.Run("bank", func(t *testing.T) {
			bank := opts
			bank.Duration = 15 * time.Second
			run(t, suite.NewBank(), []suite.Fault{suite.Kill{Leader: true}, suite.Halves{}}, bank)
		})
		t.Run("queue", func(t *testing.T) {
			queue := opts
			queue.Duration = 10 * time.Second
			run(t, suite.NewQueue(), []suite.Fault{suite.Kill{Leader: true}}, queue)
		})
		t.Run("webhook", func(t *testing.T) {
			wh := opts
			wh.Duration = 15 * time.Second
			run(t, suite.NewWebhook(), []suite.Fault{suite.Kill{Leader: true}, suite.Pause{Leader: true}}, wh)
		})
		t.Run("files", func(t *testing.T) {
			files := opts
			files.Duration = 15 * time.Second
			run(t, suite.NewFiles(), []suite.Fault{suite.Kill{}, suite.IsolateLeader{}}, files)
		})
		return
	}
	total := envDuration(t, "JEPSEN_TIME", 5*time.Minute)
	opts := baseOptions(t)
	opts.Duration = total / 4
	// Fault lengths grow with the time given, so a round of every fault
	// fits a run: about 3-4 s faults and 2-12 s pauses in the default 5
	// minutes, up to 10 s faults and 2-30 s pauses from about 30 minutes.
	slot := opts.Duration / time.Duration(len(allFaults()))
	opts.FaultMin = 2 * time.Second
	opts.FaultMax = min(max(slot-2*time.Second, 3*time.Second), 10*time.Second)
	opts.PauseMin = 2 * time.Second
	opts.PauseMax = min(max(2*slot, 5*time.Second), 30*time.Second)
	t.Run("register", func(t *testing.T) { run(t, suite.NewRegister(), allFaults(), opts) })
	t.Run("local", func(t *testing.T) { run(t, suite.NewLocal(), allFaults(), opts) })
	t.Run("set", func(t *testing.T) { run(t, suite.NewSet(), allFaults(), opts) })
	t.Run("realtime", func(t *testing.T) { run(t, suite.NewRealtime(), allFaults(), opts) })
	t.Run("bank", func(t *testing.T) { run(t, suite.NewBank(), allFaults(), opts) })
	t.Run("queue", func(t *testing.T) { run(t, suite.NewQueue(), allFaults(), opts) })
	t.Run("webhook", func(t *testing.T) { run(t, suite.NewWebhook(), allFaults(), opts) })
	t.Run("files", func(t *testing.T) { run(t, suite.NewFiles(), allFaults(), opts) })
	five := opts
	five.Nodes = 5
	t.Run("set-5-nodes", func(t *testing.T) { run(t, suite.NewSet(), allFaults(), five) })
}

// TestJepsenCatchesBrokenBuilds: the fault binary's deliberate defects
// are caught by the checkers, so a pass above means something.
func TestJepsenCatchesBrokenBuilds(t *testing.T) {
	jepsenMode(t)
	t.Run("ack-before-apply", func(t *testing.T) {
		opts := baseOptions(t)
		opts.Duration = 10 * time.Second
		opts.NodeEnv = []string{"SVC_FAULT_ACK_BEFORE_APPLY=1"}
		rep := suite.Run(t, suite.NewLocal(), []suite.Fault{suite.Latency{}}, opts)
		if rep.Verdict.Valid || rep.Verdict.Stale == 0 {
			t.Fatalf("followers answering before they apply went unnoticed: %s", rep.Summary())
		}
		t.Logf("caught: %s", rep.Summary())
	})
	t.Run("local-read-index", func(t *testing.T) {
		opts := baseOptions(t)
		opts.Duration = 10 * time.Second
		opts.NodeEnv = []string{"SVC_FAULT_LOCAL_READ_INDEX=1"}
		rep := suite.Run(t, suite.NewRegister(), []suite.Fault{suite.IsolateLeader{}}, opts)
		if rep.Verdict.Linearizable != "illegal" {
			t.Fatalf("strong reads served from a stale replica went unnoticed: %s", rep.Summary())
		}
		t.Logf("caught: %s", rep.Summary())
	})
}
