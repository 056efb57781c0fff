package suite

import (
	"context"

	"svcd/jepsen/harness"
)

// DiskFloor is the free-space floor of nodes on a tmpfs (Options.Tmpfs).
const DiskFloor = 16 << 20

// DiskFull fills one random node's disk completely (its data directory is
// a tmpfs: Options.Tmpfs); healing frees it. The node takes no write (507)
// and, leading, hands its leadership over; its state machine stops at the
// first entry it cannot store and resumes by itself once the space is
// back, with nothing lost and nothing applied twice.
type DiskFull struct{}

func (DiskFull) Name() string { return "disk-full" }

func (DiskFull) Inject(ctx context.Context, env *Env) (func() error, error) {
	ns := names(env)
	nd := env.C.Node(ns[0])
	f := harness.NewFiller(nd.DataDir())
	env.logf("disk of %s full", nd.Name)
	return f.Free, f.Leave(0)
}
