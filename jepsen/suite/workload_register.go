package suite

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anishathalye/porcupine"

	"svcd/jepsen/checker"
	"svcd/jepsen/harness"
)

// registersCollection holds one register per record; an anonymous PATCH
// with ?expect=V is a compare-and-set, checked by the update rule inside
// the state machine when the command is applied.
const registersCollection = `{"name":"regs","type":"base","fields":[{"name":"v","type":"number"}],
	"view_rule":"","create_rule":"","update_rule":"@request.query.expect:isset = false || v = @request.query.expect"}`

// Register reads (X-Svc-Consistency: strong), writes and compare-and-sets
// a few registers through random nodes; porcupine checks the history is
// linearizable. Operations whose outcome is unknown may take effect at
// any later time; failed reads have no effect and are left out.
type Register struct {
	Keys []string

	start   time.Time
	next    atomic.Int64
	mu      sync.Mutex
	history []porcupine.Operation
	// seen is the last value a client saw per key: most compare-and-sets
	// expect it, so that many of them succeed.
	seen map[string]int64
}

// NewRegister is the register workload over three records.
func NewRegister() *Register {
	return &Register{Keys: []string{"reg000000000001", "reg000000000002", "reg000000000003"}, seen: map[string]int64{}}
}

func (r *Register) Name() string { return "register" }

func (r *Register) Setup(ctx context.Context, env *Env) error {
	if err := createCollection(ctx, env, registersCollection); err != nil {
		return err
	}
	_, err := createRecords(ctx, env, "regs", r.Keys)
	r.start = time.Now()
	return err
}

func (r *Register) add(w *Worker, call time.Time, in checker.RegisterInput, out checker.RegisterOutput) {
	ret := time.Since(r.start).Nanoseconds()
	if out.Unknown {
		ret = 1 << 62 // may take effect at any later time
	}
	r.mu.Lock()
	r.history = append(r.history, porcupine.Operation{ClientId: w.ID, Input: in, Output: out, Call: call.Sub(r.start).Nanoseconds(), Return: ret})
	switch {
	case in.Op == checker.OpRead:
		r.seen[in.Key] = out.Value
	case out.OK:
		r.seen[in.Key] = in.Value
	}
	r.mu.Unlock()
}

func (r *Register) Step(ctx context.Context, w *Worker) {
	nd := w.Node()
	if nd == nil {
		time.Sleep(20 * time.Millisecond)
		return
	}
	cl := w.Client(nd)
	in := checker.RegisterInput{Key: r.Keys[w.Rand.IntN(len(r.Keys))]}
	call := time.Now()
	p := w.Rand.IntN(10)
	if p < 4 {
		in.Op = checker.OpRead
		resp, err := cl.Strong().Do(ctx, "GET", "/api/v1/regs/"+in.Key, nil)
		if err != nil || resp.Status != http.StatusOK {
			w.Done("read", Fail) // no effect: left out of the history
			return
		}
		var rec struct{ V float64 }
		resp.JSON(&struct{ Data any }{&rec})
		r.add(w, call, in, checker.RegisterOutput{Value: int64(rec.V)})
		w.Done("read", OK)
		return
	}
	in.Op, in.Value = checker.OpWrite, r.next.Add(1)
	kind, path := "write", "/api/v1/regs/"+in.Key
	if p >= 7 {
		in.Op, in.Expect = checker.OpCAS, int64(w.Rand.IntN(int(r.next.Load())+1))
		if w.Rand.IntN(5) > 0 {
			r.mu.Lock()
			in.Expect = r.seen[in.Key]
			r.mu.Unlock()
		}
		kind, path = "cas", path+fmt.Sprintf("?expect=%d", in.Expect)
	}
	resp, err := cl.Do(context.Background(), "PATCH", path, map[string]any{"v": in.Value})
	switch {
	case transient(status(resp), err):
		r.add(w, call, in, checker.RegisterOutput{Unknown: true})
		w.Done(kind, Info)
	case resp.Status == http.StatusOK:
		r.add(w, call, in, checker.RegisterOutput{OK: true})
		w.Done(kind, OK)
	case in.Op == checker.OpCAS && resp.Status == http.StatusForbidden:
		r.add(w, call, in, checker.RegisterOutput{OK: false})
		w.Done(kind, Fail)
	default:
		w.Errorf("%s PATCH %s: %s", nd.Name, path, resp)
		time.Sleep(100 * time.Millisecond)
	}
}

func (r *Register) Check(ctx context.Context, env *Env) Verdict {
	r.mu.Lock()
	history := append([]porcupine.Operation(nil), r.history...)
	r.mu.Unlock()
	v := Verdict{Valid: true}
	for _, op := range history {
		if in := op.Input.(checker.RegisterInput); in.Op != checker.OpRead && op.Output.(checker.RegisterOutput).OK {
			v.Acknowledged++
		}
	}
	res, info := porcupine.CheckOperationsVerbose(checker.RegisterModel(), history, 90*time.Second)
	switch res {
	case porcupine.Ok:
		v.Linearizable = "ok"
	case porcupine.Unknown:
		v.Linearizable = "unknown"
		v.Notes = append(v.Notes, fmt.Sprintf("linearizability check timed out over %d operations", len(history)))
	default:
		v.Valid, v.Linearizable = false, "illegal"
		path := filepath.Join(env.Dir, fmt.Sprintf("register-%d.html", env.Opts.Seed))
		if f, err := os.Create(path); err == nil {
			porcupine.Visualize(checker.RegisterModel(), info, f)
			f.Close()
			v.Visualization = path
		}
	}
	v.Notes = append(v.Notes, fmt.Sprintf("%d operations in the history", len(history)))
	return v
}

// status is resp's status, 0 without a response.
func status(resp *harness.Response) int {
	if resp == nil {
		return 0
	}
	return resp.Status
}
