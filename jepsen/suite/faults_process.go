package suite

import (
	"context"
	"errors"
	"fmt"
	"time"

	"svcd/jepsen/harness"
)

// target picks the node a fault acts on: the leader, or a random follower.
func target(env *Env, leader bool) (*harness.Node, error) {
	l, err := env.C.WaitLeader(15 * time.Second)
	if err != nil {
		return nil, err
	}
	if leader {
		return l, nil
	}
	var fs []*harness.Node
	for _, nd := range env.C.Running() {
		if nd != l {
			fs = append(fs, nd)
		}
	}
	if len(fs) == 0 {
		return nil, errors.New("no follower runs")
	}
	return fs[env.Rand.IntN(len(fs))], nil
}

func role(leader bool) string {
	if leader {
		return "leader"
	}
	return "follower"
}

// Kill SIGKILLs the leader or a follower; healing restarts it on the same
// data directory.
type Kill struct{ Leader bool }

func (f Kill) Name() string { return "kill-" + role(f.Leader) }

func (f Kill) Inject(ctx context.Context, env *Env) (func() error, error) {
	nd, err := target(env, f.Leader)
	if err != nil {
		return nil, err
	}
	if err := nd.Kill(); err != nil {
		return nil, err
	}
	env.logf("kill %s (%s)", nd.Name, role(f.Leader))
	return func() error { return env.C.TryRestart(env.T, nd.Name) }, nil
}

// Pause SIGSTOPs the leader or a follower for a random time between
// Options.PauseMin and PauseMax (the nemesis holds the fault that long);
// healing SIGCONTs it.
type Pause struct{ Leader bool }

func (f Pause) Name() string { return "pause-" + role(f.Leader) }

func (f Pause) Inject(ctx context.Context, env *Env) (func() error, error) {
	nd, err := target(env, f.Leader)
	if err != nil {
		return nil, err
	}
	if err := nd.Pause(); err != nil {
		return nil, err
	}
	hold := between(env, env.Opts.PauseMin, env.Opts.PauseMax)
	env.logf("pause %s (%s) for %s", nd.Name, role(f.Leader), hold.Round(time.Millisecond))
	select {
	case <-ctx.Done():
	case <-time.After(hold):
	}
	return func() error {
		if err := nd.Resume(); err != nil {
			return fmt.Errorf("resume %s: %w", nd.Name, err)
		}
		return nil
	}, nil
}

// between is a random duration in [lo, hi].
func between(env *Env, lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(env.Rand.Int64N(int64(hi-lo)+1))
}
