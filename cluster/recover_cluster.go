package cluster

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/hashicorp/raft"

	"svcd/cluster/liblog"
)

// RecoverCluster rewrites the Raft state of a stopped member whose cluster
// lost its quorum for good (a majority of the voters gone), so that at its
// next start it belongs to a new cluster of exactly servers: rqlite's
// peers.json recovery, done by the repair command instead of a file the
// node picks up. It is hashicorp/raft's RecoverCluster: the newest
// snapshot and every entry of the log are applied to sm (the log may
// hold entries the old cluster never committed: they are kept), a new
// snapshot records the state with servers as its membership, and the log
// is emptied. Every member named must be recovered with the same list
// before any of them starts; the one with the most recent state leads.
//
// dir is the node's Raft directory; sm is its state machine, opened on its
// database with every command handler registered.
func RecoverCluster(dir string, servers []Server, sm StateMachine, log *slog.Logger) error {
	if len(servers) == 0 {
		return errors.New("cluster: recover: no members")
	}
	conf := raft.Configuration{}
	for _, s := range servers {
		if s.ID == "" || s.Addr == "" {
			return fmt.Errorf("cluster: recover: a member needs an id and a Raft address: %+v", s)
		}
		suffrage := raft.Nonvoter
		if s.Voter {
			suffrage = raft.Voter
		}
		conf.Servers = append(conf.Servers, raft.Server{ID: raft.ServerID(s.ID), Address: raft.ServerAddress(s.Addr), Suffrage: suffrage})
	}
	logs, err := openLogStore(filepath.Join(dir, "raft.db"), false)
	if err != nil {
		return err
	}
	defer logs.Close()
	libs := liblog.New(log, liblog.Options{SingleNode: true})
	snaps, err := openSnapshotStore(dir, libs.Raft(), log)
	if err != nil {
		return fmt.Errorf("cluster: snapshot store: %w", err)
	}
	rc := raft.DefaultConfig()
	rc.LocalID = conf.Servers[0].ID
	rc.Logger = libs.Raft()
	_, trans := raft.NewInmemTransport("")
	if err := raft.RecoverCluster(rc, recoverFSM{&raftFSM{sm: sm}}, logs, logs, snaps, trans, conf); err != nil {
		return fmt.Errorf("cluster: recover: %w", err)
	}
	return nil
}

// recoverFSM is the state machine as RecoverCluster drives it. raft's
// RecoverCluster persists the snapshot it takes but never releases it,
// which would keep the snapshot's read transaction (and the store's read
// lock) for ever: its snapshot releases itself once persisted.
type recoverFSM struct{ *raftFSM }

func (f recoverFSM) Snapshot() (raft.FSMSnapshot, error) {
	s, err := f.raftFSM.Snapshot()
	if err != nil {
		return nil, err
	}
	return releasedSnapshot{s}, nil
}

type releasedSnapshot struct{ raft.FSMSnapshot }

func (s releasedSnapshot) Persist(sink raft.SnapshotSink) error {
	defer s.Release()
	return s.FSMSnapshot.Persist(sink)
}
