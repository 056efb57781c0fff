package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"svcd/cluster"
)

const reseedHelp = `usage: svcd repair reseed [--dir DIR] [--join URL,...] [--node-id ID] [--force]

Repairs a cluster member whose Raft log or snapshots are damaged: the node
refuses to start with "raft.db is damaged ...; repair: svcd repair reseed",
or its state machine stopped at a damaged entry (/_/health: "stalled").
The member gets a fresh copy of the cluster's state from the leader.

It moves raft/raft.db, raft/snapshots and the database (data.db, -wal,
-shm) into DIR/repair-<time>-reseed/ and leaves a marker, raft/reseed.json.
The node id, jwt.key and encryption.key stay. Start the node again with
its usual command (SVC_CLUSTER_KEY, --node-id, --raft-addr). Before Raft
starts, it asks the cluster, through its --join URLs (else the ones given
here), to remove it and add it back as the same member; then it receives a
snapshot from the leader and catches up. A --bootstrap flag is ignored
while the marker is there; the node removes the marker at a later start,
once it holds Raft state again.

Why remove it and add it back rather than restart it empty: a voter that
lost its log and its votes must not be counted as the member it was
(counted, its old acknowledgements could let an election lose a committed
entry). Removed, the cluster commits without it, so every entry it helped
commit is held by a quorum of the others. This needs a quorum of the other
members running, and every member on a version that knows the reseed join.

It refuses a lone node (started without --raft-addr, or the only member of
its cluster): no peer holds a copy of its state; restore it from a backup
(docs/operations.md). It refuses to run while a node uses DIR.

Options:
  --dir DIR        the data directory (default: SVC_DATA_DIR, else ./svc_data)
  --join URL,...   member URLs to rejoin through, for a node started without
                   --join (the one started with --bootstrap)
  --node-id ID     this node's id when it is not in DIR/node-id (the
                   --node-id it runs with; default: SVC_NODE_ID)
  --force          reseed even when the damaged files no longer tell the
                   membership (only for a member of a cluster of several)
`

func runRepairReseed(args []string) error {
	var join, nodeID string
	var force bool
	dataDir, err := repairFlags("reseed", args, func(fs *flag.FlagSet) {
		fs.StringVar(&join, "join", "", "member URLs to rejoin through")
		fs.StringVar(&nodeID, "node-id", os.Getenv("SVC_NODE_ID"), "this node's id")
		fs.BoolVar(&force, "force", false, "reseed without a readable membership")
	})
	if err != nil {
		return err
	}
	if err := checkStopped(dataDir); err != nil {
		return err
	}
	raftDir := filepath.Join(dataDir, "raft")
	if nodeID == "" {
		b, _ := os.ReadFile(filepath.Join(dataDir, "node-id"))
		nodeID = strings.TrimSpace(string(b))
	}
	if err := checkNotLone(raftDir, nodeID, force); err != nil {
		return err
	}
	marker := cluster.Reseed{NodeID: nodeID, Join: splitURLs(join), At: time.Now().UTC()}
	release, err := lockDataDir(dataDir)
	if err != nil {
		return err
	}
	defer release()
	// The marker goes first: a crash after it and before the moves leaves
	// the state in place (the next start clears the marker), while moves
	// without it would let a --bootstrap start form a second cluster.
	if err := cluster.WriteReseed(raftDir, marker); err != nil {
		return err
	}
	aside, moved, err := moveAside(dataDir, "reseed", append([]string{"raft/raft.db", "raft/snapshots"}, dbFiles()...))
	if err != nil {
		return err
	}
	marker.Aside = aside
	if err := cluster.WriteReseed(raftDir, marker); err != nil {
		return err
	}
	if len(moved) > 0 {
		fmt.Printf("moved %s aside to %s\n", strings.Join(moved, ", "), aside)
	}
	fmt.Printf("kept the node id and the key files; left %s\n", filepath.Join(raftDir, "reseed.json"))
	fmt.Println("next: start this node again with its usual command (SVC_CLUSTER_KEY, --node-id, --raft-addr, and")
	if len(marker.Join) > 0 {
		fmt.Printf("--join; it rejoins through those URLs, then %s). Before Raft starts it asks the cluster to\n", strings.Join(marker.Join, ","))
	} else {
		fmt.Println("--join URL of a running member). Before Raft starts it asks the cluster to")
	}
	fmt.Println("remove it and add it back, then receives a snapshot from the leader and catches up.")
	if aside != "" {
		fmt.Printf("once it is ready and its digest equals the others', delete %s\n", aside)
	}
	return nil
}

// checkNotLone refuses to reseed a node that has no peer to copy from: a
// single-node data directory, or the only member of its cluster. Without
// a readable membership, force decides.
func checkNotLone(raftDir, nodeID string, force bool) error {
	servers, ok := cluster.RecordedMembership(raftDir)
	if !ok {
		if force {
			return nil
		}
		return errors.New("repair reseed: the damaged files no longer tell this node's cluster membership; " +
			"if it is one member of a cluster of several, run again with --force; a lone node is restored " +
			"from a backup instead (docs/operations.md)")
	}
	for _, s := range servers {
		if strings.HasPrefix(s.Addr, "inmem:") {
			return errors.New("repair reseed: this data directory belongs to a single-node server: no peer holds " +
				"a copy of its state to reseed it from; restore it from a backup instead (docs/operations.md)")
		}
	}
	if len(servers) < 2 {
		return fmt.Errorf("repair reseed: this node is the only member of its cluster (%s): no peer holds a copy "+
			"of its state to reseed it from; restore it from a backup instead (docs/operations.md)", servers[0].ID)
	}
	if nodeID != "" && !memberOf(servers, nodeID) {
		fmt.Fprintf(os.Stderr, "note: %s is not in the membership its files record; the reseed adds it back\n", nodeID)
	}
	return nil
}

func memberOf(servers []cluster.Server, id string) bool {
	for _, s := range servers {
		if s.ID == id {
			return true
		}
	}
	return false
}

// splitURLs splits a comma list, dropping blanks.
func splitURLs(s string) []string {
	var out []string
	for _, u := range strings.Split(s, ",") {
		if u = strings.TrimSpace(u); u != "" {
			out = append(out, u)
		}
	}
	return out
}
