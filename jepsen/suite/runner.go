package suite

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"svcd/jepsen/harness"
)

// Options configure a run.
type Options struct {
	Nodes   int
	Clients int
	// Duration is how long the clients run (faults included).
	Duration time.Duration
	// FaultMin and FaultMax bound how long a network fault or a crash
	// lasts; PauseMin and PauseMax how long a process stays stopped.
	FaultMin, FaultMax time.Duration
	PauseMin, PauseMax time.Duration
	// Quiet is the healthy gap after each fault has healed and the
	// cluster recovered.
	Quiet time.Duration
	Seed  uint64
	// NodeEnv is extra KEY=VALUE environment for every node (the fault
	// binary's defect switches, for example).
	NodeEnv []string
	// Tmpfs, when set, puts every node's data directory on a tmpfs of that
	// many bytes (the DiskFull fault fills one), with a free-space floor
	// of DiskFloor.
	Tmpfs int64
	// ReportDir receives <workload>-<seed>.json (and the linearizability
	// visualization on failure); empty means a temporary directory.
	ReportDir string
}

func (o *Options) defaults() {
	if o.Nodes == 0 {
		o.Nodes = 3
	}
	if o.Clients == 0 {
		o.Clients = 6
	}
	if o.Duration == 0 {
		o.Duration = 30 * time.Second
	}
	if o.FaultMin == 0 {
		o.FaultMin, o.FaultMax = 3*time.Second, 6*time.Second
	}
	if o.PauseMin == 0 {
		o.PauseMin, o.PauseMax = 2*time.Second, 5*time.Second
	}
	if o.Quiet == 0 {
		o.Quiet = time.Second
	}
	if o.Seed == 0 {
		o.Seed = uint64(time.Now().UnixNano())
	}
}

// Run starts a cluster of the fault binary in network namespaces, runs
// the workload's clients for opts.Duration while the faults are injected
// one after the other (each healed, and the cluster recovered, before the
// next), heals everything, waits for the nodes to converge and checks the
// history. Every fault is applied at least once, so the clients run for at
// least Duration and until the first round of faults is done. It returns
// the report (also written to opts.ReportDir); the caller judges it.
func Run(t *testing.T, w Workload, faults []Fault, opts Options) Report {
	t.Helper()
	opts.defaults()
	if err := harness.NetworkSupported(); err != nil {
		t.Fatalf("jepsen: %v", err)
	}
	dir := opts.ReportDir
	if dir == "" {
		dir = t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("jepsen %s: seed %d (JEPSEN_SEED=%d reproduces the plan)", w.Name(), opts.Seed, opts.Seed)
	env0 := append([]string{"SVC_FAULT_CLOCK_FILE=" + ClockFile}, opts.NodeEnv...)
	if opts.Tmpfs > 0 {
		env0 = append(env0, fmt.Sprintf("SVC_MIN_FREE_BYTES=%d", DiskFloor))
	}
	c := harness.StartCluster(t, opts.Nodes, harness.ClusterOptions{
		Netns: true,
		Bin:   harness.BuildFaultBinary(t),
		Env:   env0,
		Tmpfs: opts.Tmpfs,
	})
	env := &Env{T: t, C: c, Net: c.Network(), Rand: rand.New(rand.NewPCG(opts.Seed, 0x6e656d)), Opts: opts, Dir: dir}
	ctx, cancel := context.WithTimeout(context.Background(), opts.Duration)
	defer cancel()
	clients, stopClients := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	// Clients never outlive the run, even when it stops on a fatal error.
	defer func() { stopClients(); wg.Wait() }()
	if err := w.Setup(ctx, env); err != nil {
		t.Fatalf("jepsen %s: setup: %v", w.Name(), err)
	}
	rep := Report{Workload: w.Name(), Nodes: opts.Nodes, Clients: opts.Clients, Seed: opts.Seed, Faults: map[string]int{}}
	mon := startMonitor(env)

	start := time.Now()
	workers := make([]*Worker, opts.Clients)
	for i := range workers {
		workers[i] = &Worker{ID: i, Rand: rand.New(rand.NewPCG(opts.Seed, uint64(i+1))), env: env, counts: map[string]int{}}
		wg.Add(1)
		go func(wk *Worker) {
			defer wg.Done()
			for clients.Err() == nil {
				w.Step(clients, wk)
			}
		}(workers[i])
	}
	nemesis(ctx, env, faults, rep.Faults)
	<-ctx.Done()
	stopClients()
	wg.Wait()
	rep.Duration = time.Since(start).Round(time.Millisecond).String()

	finish(t, env, w)
	mon.stop()
	rep.Elections, rep.LeaderChanges = mon.elections()
	logRaftEvents(env)
	rep.Ops = map[string]int{}
	for _, wk := range workers {
		for k, n := range wk.counts {
			rep.Ops[k] += n
		}
	}
	rep.Unavailability = unavailability(env.records(), start, time.Now(), time.Second)
	checkCtx, cancelCheck := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancelCheck()
	rep.Verdict = w.Check(checkCtx, env)
	rep.write(t, dir)
	t.Log("\n" + rep.String())
	return rep
}

// nemesis injects the faults in a seeded random order, round after round,
// until ctx ends (the first round always completes), counting each
// application in applied.
func nemesis(ctx context.Context, env *Env, faults []Fault, applied map[string]int) {
	if len(faults) == 0 {
		return
	}
	hold := context.Background() // the first round ignores ctx
	sleep(hold, env.Opts.Quiet)
	for round := 0; round == 0 || ctx.Err() == nil; round++ {
		if round > 0 {
			hold = ctx
		}
		order := env.Rand.Perm(len(faults))
		for _, i := range order {
			if hold.Err() != nil {
				return
			}
			f := faults[i]
			// A fault once started runs to its end even if the run's time
			// is up meanwhile: its own calls are not cut by the deadline.
			injectCtx, cancel := context.WithTimeout(context.Background(), time.Minute)
			heal, err := f.Inject(injectCtx, env)
			cancel()
			if err != nil {
				env.T.Errorf("jepsen: inject %s: %v", f.Name(), err)
			} else {
				applied[f.Name()]++
			}
			if _, isPause := f.(Pause); !isPause && err == nil {
				sleep(hold, between(env, env.Opts.FaultMin, env.Opts.FaultMax))
			}
			if heal != nil {
				if err := heal(); err != nil {
					env.T.Errorf("jepsen: heal %s: %v", f.Name(), err)
				}
			}
			healed := time.Now()
			if err := recoverCluster(env, 30*time.Second); err != nil {
				env.T.Errorf("jepsen: after %s: %v", f.Name(), err)
				return
			}
			env.logf("healed %s; the cluster was ready %s later", f.Name(), time.Since(healed).Round(time.Millisecond))
			sleep(hold, env.Opts.Quiet)
		}
	}
}

// recoverCluster waits until every node runs, is ready and agrees on a
// leader.
func recoverCluster(env *Env, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for _, nd := range env.C.Nodes() {
		if !nd.Running() {
			return fmt.Errorf("%s is not running", nd.Name)
		}
		if err := nd.WaitReady(ctx); err != nil {
			return err
		}
	}
	_, err := env.C.WaitLeader(timeout)
	return err
}

// Quiescer is a workload that has background work of its own to stop
// (scheduled jobs) before the log can come to rest.
type Quiescer interface {
	Quiesce(ctx context.Context, env *Env) error
}

// finish heals every fault (network, pauses, crashes, clocks), lets w
// stop its background work, and waits for the nodes to converge (same
// digest at the same index) and stay so.
func finish(t *testing.T, env *Env, w Workload) {
	t.Helper()
	if err := env.Net.Heal(); err != nil {
		t.Errorf("jepsen: heal: %v", err)
	}
	for _, nd := range env.C.Nodes() {
		os.Remove(filepath.Join(nd.DataDir(), ClockFile))
		if nd.Running() {
			nd.Resume() // harmless when it is not stopped
		} else {
			env.C.Restart(t, nd.Name)
		}
	}
	if err := recoverCluster(env, 60*time.Second); err != nil {
		t.Fatalf("jepsen: the cluster did not recover: %v", err)
	}
	if qz, ok := w.(Quiescer); ok {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err := qz.Quiesce(ctx, env)
		cancel()
		if err != nil {
			t.Errorf("jepsen: quiesce %s: %v", w.Name(), err)
		}
	}
	// Writes whose clients gave up can still be in flight (a resumed
	// process finishing the requests it held when it was stopped): wait
	// until the nodes agree and the log has stopped growing for 2 s.
	deadline := time.Now().Add(60 * time.Second)
	var last uint64
	for {
		d, err := env.C.Converge(time.Until(deadline))
		if err != nil {
			t.Fatalf("jepsen: %v", err)
		}
		if d.AppliedIndex == last {
			return
		}
		last = d.AppliedIndex
		if time.Now().After(deadline) {
			t.Fatalf("jepsen: the log kept growing after the clients stopped (index %d)", last)
		}
		time.Sleep(2 * time.Second)
	}
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

func (e *Env) logf(format string, args ...any) {
	e.T.Logf("%s nemesis: "+format, append([]any{time.Now().Format("15:04:05.000")}, args...)...)
}

// retire stops a node removed from the cluster for good.
func (e *Env) retire(name string) {
	e.C.Forget(name)
	e.mu.Lock()
	e.retiredN++
	e.mu.Unlock()
}

func (e *Env) retired() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.retiredN
}
