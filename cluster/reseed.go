package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// A member whose Raft state is damaged is reseeded: `svcd repair reseed`
// moves its log and snapshots aside and leaves a Reseed marker in its Raft
// directory. Until the node holds Raft state again, the marker makes it
// rejoin instead of bootstrap (a --bootstrap flag on an empty directory
// would otherwise form a second cluster of one), and its join asks the
// leader to remove it and add it back (JoinRequest.Reseed): a voter that
// forgot its log and its votes must not be counted as the member it was.
// Removed, the cluster commits without it, so every entry its old
// acknowledgements helped commit is held by a quorum of the others; added
// back, it counts only for what it stores again, which starts with a
// snapshot from the leader.

// reseedFile is the marker's name in the Raft directory.
const reseedFile = "reseed.json"

// Reseed is the marker of a reseeded node.
type Reseed struct {
	// NodeID is the node's id: it rejoins as the same member.
	NodeID string `json:"node_id"`
	// Join lists member URLs to rejoin through when the node is started
	// without --join.
	Join []string `json:"join,omitempty"`
	// At is when the state was moved aside, Aside where to.
	At    time.Time `json:"at"`
	Aside string    `json:"aside,omitempty"`
}

// WriteReseed leaves the marker in the Raft directory dir.
func WriteReseed(dir string, r Reseed) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("cluster: reseed marker: %w", err)
	}
	path := filepath.Join(dir, reseedFile)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("cluster: reseed marker: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("cluster: reseed marker: %w", err)
	}
	return nil
}

// ReadReseed returns the marker in dir, nil when there is none.
func ReadReseed(dir string) (*Reseed, error) {
	b, err := os.ReadFile(filepath.Join(dir, reseedFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cluster: reseed marker: %w", err)
	}
	var r Reseed
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("cluster: reseed marker %s: %w", filepath.Join(dir, reseedFile), err)
	}
	return &r, nil
}

// ClearReseed removes the marker: the node holds Raft state again.
func ClearReseed(dir string) error {
	err := os.Remove(filepath.Join(dir, reseedFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// HasState reports whether the Raft directory dir holds Raft state (log
// entries, a current term or a snapshot), as a start would find it. It
// checks the log file first (scanLogFile), so damage is an error, not a
// panic; a running node's log is ErrLogLocked.
func HasState(dir string) (bool, error) {
	sum, err := scanLockedLog(dir, nil)
	if err != nil {
		return false, err
	}
	if _, ok := sum.Conf[keyCurrentTerm]; ok || sum.Last > 0 {
		return true, nil
	}
	snap, err := newestSnapshot(dir)
	return snap != nil, err
}

// shouldBootstrap decides whether a start without Raft state forms a new
// cluster: a single node or --bootstrap does, unless the node was reseeded
// and must rejoin its cluster instead.
func (n *Node) shouldBootstrap(has bool) (bool, error) {
	if has || !(n.cfg.SingleNode() || n.cfg.Bootstrap) {
		return false, nil
	}
	r, err := ReadReseed(n.cfg.Dir)
	switch {
	case err != nil:
		return false, err
	case r == nil:
		return true, nil
	case n.cfg.SingleNode():
		return false, errors.New("cluster: this node's Raft state was moved aside by svcd repair reseed; " +
			"it must rejoin its cluster: start it with --raft-addr and --join")
	}
	n.cfg.Logger.Info("not forming a new cluster: this node was reseeded and rejoins its own", "since", r.At)
	return false, nil
}
