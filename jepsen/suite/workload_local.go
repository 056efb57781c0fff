package suite

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

const localCollection = `{"name":"lregs","type":"base","fields":[{"name":"v","type":"number"}],
	"view_rule":"","create_rule":"","update_rule":""}`

// Local writes registers and reads them back with the default (local)
// consistency, through random nodes, and checks read-your-writes per node:
// a read on node N that begins after N acknowledged a write of the same
// register at log index I returns that write or a later one (a value
// written at an index >= I). Reads of a value whose write never answered
// cannot be placed and are counted, not judged.
type Local struct {
	Keys []string

	next atomic.Int64
	mu   sync.Mutex
	// index of every value an acknowledged write (or the create) stored
	index map[string]map[int64]uint64
	acks  []localAck
	reads []localRead
}

type localAck struct {
	node, key string
	index     uint64
	ret       time.Time
}

type localRead struct {
	node, key string
	value     int64
	call      time.Time
}

// NewLocal is the local-read workload over three records.
func NewLocal() *Local {
	return &Local{Keys: []string{"loc000000000001", "loc000000000002", "loc000000000003"}, index: map[string]map[int64]uint64{}}
}

func (l *Local) Name() string { return "local" }

func (l *Local) Setup(ctx context.Context, env *Env) error {
	if err := createCollection(ctx, env, localCollection); err != nil {
		return err
	}
	created, err := createRecords(ctx, env, "lregs", l.Keys)
	for k, idx := range created {
		l.index[k] = map[int64]uint64{0: idx}
	}
	return err
}

func (l *Local) Step(ctx context.Context, w *Worker) {
	nd := w.Node()
	if nd == nil {
		time.Sleep(20 * time.Millisecond)
		return
	}
	cl := w.Client(nd)
	key := l.Keys[w.Rand.IntN(len(l.Keys))]
	path := "/api/v1/lregs/" + key
	call := time.Now()
	if w.Rand.IntN(2) == 0 {
		resp, err := cl.Do(ctx, "GET", path, nil)
		if err != nil || resp.Status != http.StatusOK {
			w.Done("read", Fail)
			return
		}
		var rec struct{ V float64 }
		resp.JSON(&struct{ Data any }{&rec})
		l.mu.Lock()
		l.reads = append(l.reads, localRead{nd.Name, key, int64(rec.V), call})
		l.mu.Unlock()
		w.Done("read", OK)
		return
	}
	v := l.next.Add(1)
	resp, err := cl.Do(context.Background(), "PATCH", path, map[string]any{"v": v})
	switch {
	case transient(status(resp), err):
		w.Done("write", Info)
	case resp.Status == http.StatusOK:
		l.mu.Lock()
		l.index[key][v] = resp.Index()
		l.acks = append(l.acks, localAck{nd.Name, key, resp.Index(), time.Now()})
		l.mu.Unlock()
		w.Done("write", OK)
	default:
		w.Errorf("%s PATCH %s: %s", nd.Name, path, resp)
		time.Sleep(100 * time.Millisecond)
	}
}

func (l *Local) Check(ctx context.Context, env *Env) Verdict {
	l.mu.Lock()
	defer l.mu.Unlock()
	v := Verdict{Valid: true, Acknowledged: len(l.acks)}
	unplaced, judged := 0, 0
	for _, rd := range l.reads {
		var floor uint64
		for _, a := range l.acks {
			if a.node == rd.node && a.key == rd.key && a.ret.Before(rd.call) {
				floor = max(floor, a.index)
			}
		}
		if floor == 0 {
			continue
		}
		idx, ok := l.index[rd.key][rd.value]
		if !ok {
			unplaced++
			continue
		}
		judged++
		if idx < floor {
			v.Stale++
			if v.Stale <= 5 {
				v.Notes = append(v.Notes, fmt.Sprintf("stale read on %s: %s = %d (index %d) after the node acknowledged index %d", rd.node, rd.key, rd.value, idx, floor))
			}
		}
	}
	v.Valid = v.Stale == 0
	v.Notes = append(v.Notes, fmt.Sprintf("%d reads judged against an earlier acknowledged write on their node, %d could not be placed", judged, unplaced))
	return v
}
