package cluster

import (
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// flakyLogs is a raft log store whose appends fail while failing is set,
// the way a full disk fails them.
type flakyLogs struct {
	raft.LogStore
	failing atomic.Bool
}

func (f *flakyLogs) StoreLog(l *raft.Log) error { return f.StoreLogs([]*raft.Log{l}) }

func (f *flakyLogs) StoreLogs(ls []*raft.Log) error {
	if f.failing.Load() {
		return errors.New("no space left on device")
	}
	return f.LogStore.StoreLogs(ls)
}

type countFSM struct{ n atomic.Uint64 }

func (c *countFSM) Apply(*raft.Log) any                 { c.n.Add(1); return nil }
func (c *countFSM) Snapshot() (raft.FSMSnapshot, error) { return nopSnapshot{}, nil }
func (c *countFSM) Restore(rc io.ReadCloser) error      { return rc.Close() }

type nopSnapshot struct{}

func (nopSnapshot) Persist(s raft.SnapshotSink) error { return s.Close() }
func (nopSnapshot) Release()                          {}

// TestRefusedAppendDoesNotStopReplication: a follower whose log refuses
// appends for a moment, again and again, while the leader is busy, keeps
// receiving entries afterwards. Over raft's plain TCP transport the
// leader's pipeline to it deadlocks after such a refusal (pipeline.go) and
// the follower never catches up; behind guardedTransport it does.
func TestRefusedAppendDoesNotStopReplication(t *testing.T) {
	const n = 3
	hl := hclog.New(&hclog.LoggerOptions{Level: hclog.Off})
	rafts := make([]*raft.Raft, n)
	logs := make([]*flakyLogs, n)
	var servers []raft.Server
	trans := make([]raft.Transport, n)
	for i := range n {
		tt, err := raft.NewTCPTransportWithLogger("127.0.0.1:0", nil, 3, 2*time.Second, hl)
		if err != nil {
			t.Fatal(err)
		}
		trans[i] = guardedTransport{tt}
		id := raft.ServerID(string(rune('a' + i)))
		servers = append(servers, raft.Server{ID: id, Address: tt.LocalAddr(), Suffrage: raft.Voter})
	}
	for i := range n {
		cfg := raft.DefaultConfig()
		cfg.LocalID = servers[i].ID
		cfg.Logger = hl
		cfg.HeartbeatTimeout = 200 * time.Millisecond
		cfg.ElectionTimeout = 200 * time.Millisecond
		cfg.LeaderLeaseTimeout = 100 * time.Millisecond
		cfg.CommitTimeout = 5 * time.Millisecond
		logs[i] = &flakyLogs{LogStore: raft.NewInmemStore()}
		stable := raft.NewInmemStore()
		snaps := raft.NewInmemSnapshotStore()
		if i == 0 {
			if err := raft.BootstrapCluster(cfg, logs[i], stable, snaps, trans[i], raft.Configuration{Servers: servers}); err != nil {
				t.Fatal(err)
			}
		}
		r, err := raft.NewRaft(cfg, &countFSM{}, logs[i], stable, snaps, trans[i])
		if err != nil {
			t.Fatal(err)
		}
		rafts[i] = r
	}
	t.Cleanup(func() {
		for i, r := range rafts {
			r.Shutdown().Error()
			trans[i].(guardedTransport).Close()
		}
	})

	leader := -1
	for deadline := time.Now().Add(10 * time.Second); leader < 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for i, r := range rafts {
			if r.State() == raft.Leader {
				leader = i
			}
		}
	}
	if leader < 0 {
		t.Fatal("no leader")
	}
	victim := (leader + 1) % n

	stop := make(chan struct{})
	var writers sync.WaitGroup
	for range 4 {
		writers.Add(1)
		go func() {
			defer writers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				rafts[leader].Apply([]byte("x"), time.Second).Error()
			}
		}()
	}
	for range 20 {
		time.Sleep(100 * time.Millisecond)
		logs[victim].failing.Store(true)
		time.Sleep(30 * time.Millisecond)
		logs[victim].failing.Store(false)
	}
	close(stop)
	writers.Wait()
	if err := rafts[leader].Barrier(5 * time.Second).Error(); err != nil {
		t.Fatal(err)
	}
	want, _ := logs[leader].LastIndex()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, _ := logs[victim].LastIndex()
		if got >= want {
			t.Logf("the follower holds all %d entries", want)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the follower stopped at entry %d of %d: the leader no longer replicates to it", got, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
