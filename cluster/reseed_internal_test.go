package cluster

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"svcd/fsm"
)

func openReseedStore(t *testing.T, dir string) *fsm.Store {
	t.Helper()
	s, err := fsm.Open(fsm.Options{Path: filepath.Join(dir, "data.db"), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestReseedJoin: a join of a member already in the configuration with
// the same address and suffrage changes nothing, while a reseed join of it
// removes it and adds it back (two configuration changes), as the same
// member.
func TestReseedJoin(t *testing.T) {
	dir := t.TempDir()
	store := openReseedStore(t, dir)
	n, err := Open(Config{NodeID: "a", Dir: filepath.Join(dir, "raft"), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, store)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Shutdown()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := n.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	// Each configuration change appends an entry.
	config := func() (uint64, []raft.Server) {
		t.Helper()
		f := n.raft.GetConfiguration()
		if err := f.Error(); err != nil {
			t.Fatal(err)
		}
		return n.raft.LastIndex(), f.Configuration().Servers
	}
	// A non-voter: the lone voter commits every change by itself.
	j := JoinRequest{ID: "b", Addr: "127.0.0.1:1", Voter: false}
	if err := n.addServer(j); err != nil {
		t.Fatal(err)
	}
	added, _ := config()
	if err := n.addServer(j); err != nil {
		t.Fatal(err)
	}
	if again, _ := config(); again != added {
		t.Fatalf("a repeated join changed the configuration (last index %d -> %d)", added, again)
	}
	j.Reseed = true
	if err := n.addServer(j); err != nil {
		t.Fatal(err)
	}
	after, servers := config()
	if after < added+2 {
		t.Fatalf("a reseed join moved the last index from %d to %d; want a removal and an addition", added, after)
	}
	if len(servers) != 2 || servers[1].ID != "b" || servers[1].Suffrage != raft.Nonvoter {
		t.Fatalf("after the reseed join: %+v", servers)
	}
}

// TestReseedMarkerStopsBootstrap: with a reseed marker and no Raft state,
// a single node refuses to start and a --bootstrap node does not form a
// cluster (it waits to be contacted by its cluster's leader).
func TestReseedMarkerStopsBootstrap(t *testing.T) {
	dir := t.TempDir()
	store := openReseedStore(t, dir)
	raftDir := filepath.Join(dir, "raft")
	if err := WriteReseed(raftDir, Reseed{NodeID: "a", At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if n, err := Open(Config{NodeID: "a", Dir: raftDir, Logger: log}, store); err == nil || !strings.Contains(err.Error(), "reseed") {
		if err == nil {
			n.Shutdown()
		}
		t.Fatalf("single node with a reseed marker: %v; want a refusal", err)
	}
	n, err := Open(Config{NodeID: "a", Dir: raftDir, RaftAddr: "127.0.0.1:0", ClusterKey: "k", Bootstrap: true, Logger: log}, store)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Shutdown()
	// A bootstrap writes its configuration entry before Raft starts.
	if n.IsLeader() || n.Stats().LastIndex != 0 {
		t.Fatalf("a reseeded --bootstrap node formed a cluster: state %s, last index %d", n.State(), n.Stats().LastIndex)
	}
	if has, err := HasState(raftDir); err == nil && has {
		t.Fatal("HasState reports state the node never received")
	}
}
