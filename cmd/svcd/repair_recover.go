package main

import (
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"svcd/cluster"
	"svcd/cmd/svcd/stack"
	"svcd/engine"
	"svcd/engine/token"
	"svcd/fsm"
)

const recoverHelp = `usage: svcd repair recover --members ID=HOST:PORT[,ID=HOST:PORT...] [--dir DIR] [--node-id ID]

Recovers a cluster that lost its quorum for good: a majority of its voters
are gone and will not come back, so the survivors cannot elect a leader
and take no write (rqlite's peers.json recovery). Run it on each
surviving member, stopped, with the same --members list: the survivors'
ids and Raft addresses (their --node-id and --raft-addr). At their next
start they form a new cluster of exactly those members and elect a leader
among themselves; the one with the most recent state leads.

It applies the node's newest snapshot and its whole log to its database
(entries the old cluster may not have committed included: a survivor keeps
everything it holds), writes a new snapshot whose membership is --members,
and empties the log. The raft directory and the database are copied into
DIR/repair-<time>-recover/ first. Start each survivor again with its usual
command (SVC_CLUSTER_KEY, --node-id, --raft-addr; --bootstrap and --join
no longer matter), then add new members (POST /api/v1/admin/cluster/members
and svcd serve --join) to get the redundancy back, and compare their
digests (GET /api/v1/admin/cluster/digest).

Recovering a single survivor (--members with its own id only) makes it a
one-voter cluster at once; the other survivors can then be started empty
and joined to it, which avoids two survivors with different uncommitted
tails. It refuses to run while a node uses DIR, on a node without Raft
state, and when --members does not name this node.

Options:
  --dir DIR                     the data directory (default: SVC_DATA_DIR, else ./svc_data)
  --members ID=HOST:PORT,...    the members of the new cluster: every survivor's
                                node id and Raft address
  --node-id ID                  this node's id when it is not in DIR/node-id (the
                                --node-id it runs with; default: SVC_NODE_ID)
`

func runRepairRecover(args []string) error {
	var members, nodeID string
	dataDir, err := repairFlags("recover", args, func(fs *flag.FlagSet) {
		fs.StringVar(&members, "members", "", "the members of the new cluster")
		fs.StringVar(&nodeID, "node-id", os.Getenv("SVC_NODE_ID"), "this node's id")
	})
	if err != nil {
		return err
	}
	servers, err := parseMembers(members)
	if err != nil {
		return err
	}
	if err := checkStopped(dataDir); err != nil {
		return err
	}
	raftDir := filepath.Join(dataDir, "raft")
	if has, err := cluster.HasState(raftDir); err != nil || !has {
		return fmt.Errorf("repair recover: %s holds no Raft state to recover (%v)", dataDir, err)
	}
	id := nodeID
	if id == "" {
		b, err := os.ReadFile(filepath.Join(dataDir, "node-id"))
		if err != nil {
			return errors.New("repair recover: this node's id is not in DIR/node-id: give it with --node-id")
		}
		id = strings.TrimSpace(string(b))
	}
	if !slices.ContainsFunc(servers, func(s cluster.Server) bool { return s.ID == id }) {
		return usageErrorf("--members does not name this node (%s): list every survivor, this one included", id)
	}
	if _, err := verifyLog(raftDir); err != nil {
		return fmt.Errorf("repair recover: the Raft log is damaged: %w (docs/operations.md)", err)
	}
	aside, err := copyAside(dataDir, "recover", []string{"raft/raft.db", "raft/snapshots", "data.db", "data.db-wal", "data.db-shm"})
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "copied the Raft state and the database into %s\n", aside)
	log := quietLog()
	var stalled error
	var store *fsm.Store
	store, err = fsm.Open(fsm.Options{Path: filepath.Join(dataDir, "data.db"), Registry: fsm.NewRegistry(), Logger: log,
		OnStall: func(st fsm.Stall) {
			// An entry that cannot be applied here ends the recovery: the
			// closed store makes its snapshot fail before the log is
			// touched.
			stalled = errors.New(st.Reason)
			go store.Close()
		}})
	if err != nil {
		return err
	}
	defer store.Close()
	key := make([]byte, 32)
	rand.Read(key)
	signer, err := token.NewSigner(key)
	if err != nil {
		return err
	}
	if _, err := stack.NewDomain(stack.DomainOptions{Signer: signer, Options: engine.Options{Store: store, Logger: log}}); err != nil {
		return err
	}
	if err := cluster.RecoverCluster(raftDir, servers, store, log); err != nil {
		if stalled != nil {
			err = fmt.Errorf("%w (%v)", err, stalled)
		}
		return fmt.Errorf("repair recover: %w; nothing was changed in the log (the copy is in %s)", err, aside)
	}
	var names []string
	for _, s := range servers {
		names = append(names, s.ID+" at "+s.Addr)
	}
	fmt.Printf("recovered: this node (%s) holds its state up to log entry %d; at its next start it is a member of a new cluster of %s\n",
		id, store.AppliedIndex(), strings.Join(names, ", "))
	fmt.Printf("start every member of that list with its usual command; delete %s once the cluster is healthy\n", aside)
	return nil
}

// parseMembers reads ID=HOST:PORT,...: every member is a voter.
func parseMembers(s string) ([]cluster.Server, error) {
	if strings.TrimSpace(s) == "" {
		return nil, usageErrorf("--members is required: ID=HOST:PORT of every survivor, comma-separated")
	}
	var out []cluster.Server
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		id, addr, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || id == "" || !strings.Contains(addr, ":") {
			return nil, usageErrorf("--members: %q is not ID=HOST:PORT", part)
		}
		if seen[id] {
			return nil, usageErrorf("--members names %s twice", id)
		}
		seen[id] = true
		out = append(out, cluster.Server{ID: id, Addr: addr, Voter: true})
	}
	return out, nil
}

// copyAside copies the entries rel of dataDir (files or directories) that
// exist into a new directory dataDir/repair-<UTC time>-<what>/, for a
// repair that works in place.
func copyAside(dataDir, what string, rel []string) (string, error) {
	aside := filepath.Join(dataDir, fmt.Sprintf("repair-%s-%s", time.Now().UTC().Format("20060102T150405Z"), what))
	if err := os.Mkdir(aside, 0o700); err != nil {
		return "", fmt.Errorf("repair: %w", err)
	}
	for _, r := range rel {
		src := filepath.Join(dataDir, r)
		err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rp, _ := filepath.Rel(dataDir, path)
			dst := filepath.Join(aside, rp)
			if d.IsDir() {
				return os.MkdirAll(dst, 0o700)
			}
			return copyOne(path, dst)
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return aside, fmt.Errorf("repair: copy %s aside: %w", src, err)
		}
	}
	syncDir(aside)
	return aside, nil
}

// copyOne copies the file src to dst and syncs it.
func copyOne(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
