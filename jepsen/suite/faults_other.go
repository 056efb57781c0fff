package suite

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"svcd/jepsen/harness"
)

// ClockFile is the file, in a node's data directory, whose duration the
// fault binary adds to the node's wall clock (SVC_FAULT_CLOCK_FILE).
const ClockFile = "fault-clock"

// ClockSkew moves one random node's wall clock 10 s to 10 min ahead or
// behind; healing sets it right. Raft's timers are monotonic and the state
// machine never reads a clock, so nothing but that node's timestamps may
// change.
type ClockSkew struct{}

func (ClockSkew) Name() string { return "clock-skew" }

func (ClockSkew) Inject(ctx context.Context, env *Env) (func() error, error) {
	ns := names(env)
	nd := env.C.Node(ns[0])
	off := time.Duration(10+env.Rand.IntN(591)) * time.Second
	if env.Rand.IntN(2) == 0 {
		off = -off
	}
	path := filepath.Join(nd.DataDir(), ClockFile)
	env.logf("clock of %s moved by %s", nd.Name, off)
	heal := func() error {
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			return err
		}
		return nil
	}
	return heal, os.WriteFile(path, []byte(off.String()), 0o600)
}

// Membership changes the voters during a partition: a random follower is
// cut off, removed from the configuration through the leader, and a new
// node joins the majority side as a voter; healing retires the removed
// node's process, then heals the network. The cluster keeps its
// size with one member replaced.
type Membership struct{}

func (Membership) Name() string { return "membership" }

func (Membership) Inject(ctx context.Context, env *Env) (func() error, error) {
	old, err := target(env, false)
	if err != nil {
		return nil, err
	}
	var majority []*harness.Node
	var names []string
	for _, nd := range env.C.Running() {
		if nd != old {
			majority = append(majority, nd)
			names = append(names, nd.Name)
		}
	}
	if err := env.Net.Partition([]string{old.Name}, names); err != nil {
		return healNet(env), err
	}
	leader, err := target(env, true)
	if err != nil || leader == old {
		return healNet(env), fmt.Errorf("no leader on the majority side: %v", err)
	}
	resp, err := env.C.Admin(leader).Do(ctx, "DELETE", "/api/v1/admin/cluster/members/"+old.Name, nil)
	if err != nil || resp.Status != http.StatusOK && resp.Status != http.StatusNoContent {
		// The removal may have been applied without its answer arriving:
		// a node out of the configuration must be retired, or the run
		// would wait for it to converge forever.
		heal := healNet(env)
		if st, serr := env.C.AdminState(ctx, leader, true); serr == nil {
			if _, member := st.Member(old.Name); !member {
				heal = func() error {
					env.retire(old.Name)
					return env.Net.Heal()
				}
			}
		}
		return heal, fmt.Errorf("remove %s: %v %v", old.Name, resp, err)
	}
	id := "n" + strconv.Itoa(len(env.C.Nodes())+env.retired()+1)
	nd := env.C.AddNodeVia(env.T, id, majority)
	if err := env.Net.Cut(old.Name, nd.Name); err != nil {
		return healNet(env), err
	}
	env.logf("membership: %s cut off and removed, %s joined as a voter", old.Name, nd.Name)
	return func() error {
		env.retire(old.Name)
		return env.Net.Heal()
	}, nil
}
