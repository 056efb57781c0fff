package jepsen_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"svcd/jepsen/harness"
)

// The failover benchmark (make bench-failover; docs/reliability.md,
// "Failover: the first write after the leader dies"). It measures, not
// tests: it fails only when the cluster does not recover at all.
const (
	// probeTimeout bounds each of the probe's writes.
	probeTimeout = 500 * time.Millisecond
	// failoverGiveUp bounds the wait for the first write after a kill.
	failoverGiveUp = 20 * time.Second
	// healthyTimeout bounds the wait for three caught-up voters.
	healthyTimeout = 30 * time.Second
)

// TestFailoverBench kills the leader of a 3-node cluster
// JEPSEN_FAILOVER_BENCH times (skipped when unset) while one client writes
// continuously (failoverProbe), and reports the time from each SIGKILL to
// the first acknowledged write sent after the killed process was gone: p50,
// p99 (nearest rank), max. After each kill the node is restarted and the
// next kill waits until the three voters are alive, the restarted node has
// applied the leader's commit index, and 0.5-1.5 s of writes have passed.
// Terms and leaders no kill explains are reported as spurious.
// JEPSEN_FAILOVER_ENV adds space-separated KEY=VALUE settings to every
// node (SVC_RAFT_HEARTBEAT_TIMEOUT=1s, for example).
func TestFailoverBench(t *testing.T) {
	kills := failoverBenchKills(t)
	env := strings.Fields(os.Getenv("JEPSEN_FAILOVER_ENV"))
	seed := crashSeed(t)
	rng := rand.New(rand.NewPCG(seed, 0xbe4c4))
	c := harness.StartCluster(t, 3, harness.ClusterOptions{Env: env})
	createCollectionAll(t, c, itemsCollection)
	t.Logf("seed %d, %d kills, node settings %q", seed, kills, env)

	ctx, cancel := context.WithCancel(context.Background())
	probe := newFailoverProbe(c, probeTimeout)
	watch := &leaderWatch{c: c}
	done := make(chan struct{}, 2)
	go func() { probe.run(ctx, seed); done <- struct{}{} }()
	go func() { watch.run(ctx); done <- struct{}{} }()
	defer func() { cancel(); <-done; <-done }()
	time.Sleep(time.Second) // the watch's first rounds see the starting state

	windows := [][2]time.Time{{{}, time.Now()}} // the cluster's formation
	candidaciesBefore := candidacies(c)
	var took, elect []time.Duration
	var extraTerms int
	for i := 1; i <= kills; i++ {
		pause(ctx, 500*time.Millisecond+time.Duration(rng.Int64N(int64(time.Second))))
		leader := c.MustLeader(t, leaderTimeout)
		termBefore := watch.current()
		killAt := time.Now()
		if err := leader.Kill(); err != nil {
			t.Fatal(err)
		}
		gone := time.Now()
		probe.abort()
		var first probeAttempt
		for {
			var ok bool
			if first, ok = probe.firstAckAfter(gone); ok {
				break
			}
			if time.Since(killAt) > failoverGiveUp {
				t.Fatalf("kill %d: no write acknowledged within %s of killing the leader %s", i, failoverGiveUp, leader.Name)
			}
			time.Sleep(2 * time.Millisecond)
		}
		d := first.end.Sub(killAt)
		took = append(took, d)
		newLeader := c.MustLeader(t, leaderTimeout)
		// The watch sees a term at most a poll round late.
		windows = append(windows, [2]time.Time{killAt, time.Now().Add(time.Second)})
		time.Sleep(time.Second)
		elected := "?"
		if at := electedAt(newLeader); at.After(killAt) {
			elected = at.Sub(killAt).Round(time.Millisecond).String()
			elect = append(elect, at.Sub(killAt))
		}
		terms := watch.current() - termBefore
		extraTerms += int(max(terms, 1) - 1)

		restartAt := time.Now()
		c.Restart(t, leader.Name)
		ready := time.Since(restartAt)
		caughtUp := waitCaughtUp(t, c, leader)
		t.Logf("kill %d: SIGKILL leader %s; first write acknowledged after %s (by %s, sent %s after the kill); new leader %s (leading after %s), %d new term(s); %s restarted, ready in %s, caught up in %s",
			i, leader.Name, d.Round(time.Millisecond), first.node, first.start.Sub(killAt).Round(time.Millisecond),
			newLeader.Name, elected, terms, leader.Name, ready.Round(time.Millisecond), caughtUp.Round(time.Millisecond))
		if elected != "?" && first.end.Sub(killAt) > elect[len(elect)-1]+200*time.Millisecond {
			t.Logf("kill %d: the first write came %s after the new leader; writes since the kill: %s", i,
				(first.end.Sub(killAt) - elect[len(elect)-1]).Round(time.Millisecond), probe.trail(killAt, first.end))
		}
		if probe.acksSince(restartAt) == 0 {
			pause(ctx, 200*time.Millisecond)
		}
	}
	time.Sleep(time.Second) // let the watch see any late change
	spurious := watch.outside(windows)
	okW, failedW := probe.totals()
	sorted := slices.Sorted(slices.Values(took))
	var each []string
	for _, d := range took {
		each = append(each, d.Round(time.Millisecond).String())
	}
	t.Logf("FAILOVER %d kills: p50 %s, p99 %s, max %s, min %s (each: %s)", kills,
		rank(sorted, 0.50).Round(time.Millisecond), rank(sorted, 0.99).Round(time.Millisecond),
		sorted[len(sorted)-1].Round(time.Millisecond), sorted[0].Round(time.Millisecond), strings.Join(each, " "))
	if len(elect) > 0 {
		es := slices.Sorted(slices.Values(elect))
		t.Logf("FAILOVER new leader in charge (its log): p50 %s, max %s over %d kills",
			rank(es, 0.50).Round(time.Millisecond), es[len(es)-1].Round(time.Millisecond), len(es))
	}
	t.Logf("FAILOVER terms or leaders no kill explains: %d%s; extra terms during kills (split votes): %d; "+
		"heartbeat-timeout candidacies in the logs: %d; probe writes: %d acknowledged, %d failed",
		len(spurious), describeChanges(spurious), extraTerms, candidacies(c)-candidaciesBefore, okW, failedW)
}

// failoverBenchKills is JEPSEN_FAILOVER_BENCH; the benchmark is skipped
// without it.
func failoverBenchKills(t *testing.T) int {
	s := os.Getenv("JEPSEN_FAILOVER_BENCH")
	if s == "" {
		t.Skip("failover benchmark: run with JEPSEN_FAILOVER_BENCH=<kills> (make bench-failover)")
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		t.Fatalf("JEPSEN_FAILOVER_BENCH=%q: want a positive number of kills", s)
	}
	return n
}

// waitCaughtUp waits until the leader lists three alive voters and the
// restarted node has applied the commit index the leader reported just
// before; it returns how long that took.
func waitCaughtUp(t *testing.T, c *harness.Cluster, restarted *harness.Node) time.Duration {
	t.Helper()
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), healthyTimeout)
	defer cancel()
	for {
		if leader := c.Leader(); leader != nil {
			ls, err := c.AdminState(ctx, leader, false)
			rs, rerr := c.AdminState(ctx, restarted, false)
			if err == nil && rerr == nil && aliveVoters(ls) == 3 && rs.AppliedIndex >= ls.CommitIndex {
				return time.Since(start)
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s not caught up with three alive voters within %s", restarted.Name, healthyTimeout)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func aliveVoters(st harness.State) int {
	n := 0
	for _, m := range st.Members {
		if m.Suffrage == "voter" && m.Status == "alive" {
			n++
		}
	}
	return n
}

// rank is the nearest-rank q-quantile of sorted (with 20 samples, p99 is
// the largest).
func rank(sorted []time.Duration, q float64) time.Duration {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func describeChanges(chs []leaderChange) string {
	var parts []string
	for _, ch := range chs {
		what := fmt.Sprintf("term %d", ch.term)
		if ch.leader != "" {
			what += " led by " + ch.leader
		}
		parts = append(parts, ch.at.Format("15:04:05.000")+" "+what)
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}
