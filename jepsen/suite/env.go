package suite

import (
	"context"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"svcd/jepsen/harness"
)

// Env is what workloads and faults act on: the cluster, its network, the
// test and the run's options.
type Env struct {
	T   testing.TB
	C   *harness.Cluster
	Net *harness.Network
	// Rand drives the nemesis (its goroutine only).
	Rand *rand.Rand
	Opts Options
	// Dir receives the run's report files.
	Dir string

	mu       sync.Mutex
	ops      []opRecord
	retiredN int
	// avoid is when each node may be picked again after it failed a
	// client: the workers steer around a node that just timed out, as a
	// load balancer's health check would.
	avoid map[string]time.Time
}

// avoidFor is how long the workers prefer other nodes after one failed.
const avoidFor = 2 * time.Second

// opRecord is one completed operation, for the availability figures.
type opRecord struct {
	outcome Outcome
	ret     time.Time
}

// Outcome is how an operation ended, as Jepsen names it.
type Outcome int

const (
	// OK: the operation took effect and the client knows it.
	OK Outcome = iota
	// Fail: the operation certainly did not take effect.
	Fail
	// Info: the outcome is unknown (timeout, connection lost, 5xx); it
	// may or may not have taken effect.
	Info
)

func (o Outcome) String() string {
	switch o {
	case OK:
		return "ok"
	case Fail:
		return "fail"
	}
	return "info"
}

func (e *Env) record(o Outcome, ret time.Time) {
	e.mu.Lock()
	e.ops = append(e.ops, opRecord{o, ret})
	e.mu.Unlock()
}

func (e *Env) records() []opRecord {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]opRecord(nil), e.ops...)
}

// Worker is one client of a workload: its own random source and counts.
type Worker struct {
	ID   int
	Rand *rand.Rand
	env  *Env
	last string // the node of the current operation

	mu     sync.Mutex
	counts map[string]int
}

// OpTimeout bounds every client request: past it the operation is Info.
const OpTimeout = 3 * time.Second

// Node picks a running node at random, preferring the ones that have not
// failed a client in the last avoidFor (nil when none runs).
func (w *Worker) Node() *harness.Node {
	nodes := w.env.C.Running()
	if len(nodes) == 0 {
		return nil
	}
	now := time.Now()
	w.env.mu.Lock()
	var healthy []*harness.Node
	for _, nd := range nodes {
		if now.After(w.env.avoid[nd.Name]) {
			healthy = append(healthy, nd)
		}
	}
	w.env.mu.Unlock()
	if len(healthy) > 0 {
		nodes = healthy
	}
	nd := nodes[w.Rand.IntN(len(nodes))]
	w.last = nd.Name
	return nd
}

// Client is an anonymous client for nd with OpTimeout.
func (w *Worker) Client(nd *harness.Node) *harness.Client {
	cl := w.env.C.Client(nd)
	cl.Timeout = OpTimeout
	return cl
}

// Done records one operation of kind (e.g. "write") with its outcome, on
// the node Node picked last. A node that answers Info, or fails a read
// (kind "read", "read-..." or "lookup"), is avoided for a while.
func (w *Worker) Done(kind string, o Outcome) {
	now := time.Now()
	w.env.record(o, now)
	read := kind == "read" || kind == "lookup" || strings.HasPrefix(kind, "read-")
	if o == Info || o == Fail && read {
		w.env.mu.Lock()
		if w.env.avoid == nil {
			w.env.avoid = map[string]time.Time{}
		}
		w.env.avoid[w.last] = now.Add(avoidFor)
		w.env.mu.Unlock()
	}
	w.mu.Lock()
	w.counts[kind+" "+o.String()]++
	w.mu.Unlock()
}

// Errorf reports an unexpected answer: the run fails.
func (w *Worker) Errorf(format string, args ...any) { w.env.T.Errorf(format, args...) }

// Workload is a client workload: Setup once, Step by every worker until
// the run ends, Check once the faults are healed and the nodes converged.
type Workload interface {
	Name() string
	Setup(ctx context.Context, env *Env) error
	// Step performs one operation and records it (Worker.Done).
	Step(ctx context.Context, w *Worker)
	Check(ctx context.Context, env *Env) Verdict
}

// Verdict is a workload's judgement of its history.
type Verdict struct {
	Valid bool `json:"valid"`
	// Acknowledged is how many writes were acknowledged; Lost of them are
	// missing on some node; Duplicates were applied more than once.
	Acknowledged int `json:"acknowledged"`
	Lost         int `json:"lost"`
	Duplicates   int `json:"duplicates"`
	// Stale counts reads older than a write the same node had acknowledged
	// before the read began (the local workload).
	Stale int `json:"stale,omitempty"`
	// Corrupted counts files served with other bytes than their upload's
	// (the files workload).
	Corrupted int `json:"corrupted,omitempty"`
	// Linearizable is porcupine's verdict ("ok", "illegal", "unknown"),
	// empty when the workload does not check it.
	Linearizable  string   `json:"linearizable,omitempty"`
	Visualization string   `json:"visualization,omitempty"`
	Notes         []string `json:"notes,omitempty"`
}

// Fault is one kind of fault the nemesis injects.
type Fault interface {
	Name() string
	// Inject applies the fault and returns how to heal it. It may fail the
	// test through env.T from the test's goroutine.
	Inject(ctx context.Context, env *Env) (heal func() error, err error)
}
