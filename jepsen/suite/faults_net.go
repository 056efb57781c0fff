package suite

import (
	"context"
	"fmt"
	"time"
)

// names are the running nodes' names, shuffled by the nemesis's source.
func names(env *Env) []string {
	var out []string
	for _, nd := range env.C.Running() {
		out = append(out, nd.Name)
	}
	env.Rand.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

func healNet(env *Env) func() error { return env.Net.Heal }

// IsolateLeader cuts the leader off from every other node, both ways.
type IsolateLeader struct{}

func (IsolateLeader) Name() string { return "partition-leader" }

func (IsolateLeader) Inject(ctx context.Context, env *Env) (func() error, error) {
	l, err := target(env, true)
	if err != nil {
		return nil, err
	}
	var rest []string
	for _, n := range names(env) {
		if n != l.Name {
			rest = append(rest, n)
		}
	}
	env.logf("isolate leader %s from %v", l.Name, rest)
	return healNet(env), env.Net.Partition([]string{l.Name}, rest)
}

// Halves splits the nodes into two random halves (the smaller first).
type Halves struct{}

func (Halves) Name() string { return "partition-halves" }

func (Halves) Inject(ctx context.Context, env *Env) (func() error, error) {
	ns := names(env)
	a, b := ns[:len(ns)/2], ns[len(ns)/2:]
	env.logf("partition %v | %v", a, b)
	return healNet(env), env.Net.Partition(a, b)
}

// Bridge splits the nodes into two sides that cannot talk, except through
// one node that sees both (Jepsen's bridge).
type Bridge struct{}

func (Bridge) Name() string { return "partition-bridge" }

func (Bridge) Inject(ctx context.Context, env *Env) (func() error, error) {
	ns := names(env)
	mid := len(ns) / 2
	a, bridge, b := ns[:mid], ns[mid], ns[mid+1:]
	env.logf("bridge: %v | %v, %s sees both", a, b, bridge)
	return healNet(env), env.Net.Partition(a, b)
}

// OneWay makes every other node drop what one random node sends, while
// that node still receives everything: a one-way partition.
type OneWay struct{}

func (OneWay) Name() string { return "one-way" }

func (OneWay) Inject(ctx context.Context, env *Env) (func() error, error) {
	ns := names(env)
	from := ns[0]
	env.logf("one-way: nobody hears %s", from)
	for _, to := range ns[1:] {
		if err := env.Net.Drop(from, to, 100); err != nil {
			return healNet(env), err
		}
	}
	return healNet(env), nil
}

// Loss drops a random share (20-40%) of the packets between two nodes,
// both ways.
type Loss struct{}

func (Loss) Name() string { return "packet-loss" }

func (Loss) Inject(ctx context.Context, env *Env) (func() error, error) {
	ns := names(env)
	pct := 20 + env.Rand.IntN(21)
	env.logf("loss %d%% between %s and %s", pct, ns[0], ns[1])
	if err := env.Net.Drop(ns[0], ns[1], pct); err != nil {
		return healNet(env), err
	}
	return healNet(env), env.Net.Drop(ns[1], ns[0], pct)
}

// Latency adds 50-250 ms each way to the TCP links (Raft, forwarding,
// gossip streams) between two nodes.
type Latency struct{}

func (Latency) Name() string { return "latency" }

func (Latency) Inject(ctx context.Context, env *Env) (func() error, error) {
	ns := names(env)
	d := time.Duration(50+env.Rand.IntN(201)) * time.Millisecond
	env.logf("latency %s between %s and %s", d, ns[0], ns[1])
	if err := env.Net.Delay(ns[0], ns[1], d); err != nil {
		return healNet(env), fmt.Errorf("delay: %w", err)
	}
	return healNet(env), env.Net.Delay(ns[1], ns[0], d)
}
