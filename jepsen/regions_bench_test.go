package jepsen_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"svcd/jepsen/harness"
)

// The region benchmark (make bench-regions) runs only when
// SVC_BENCH_REGIONS=1; the other variables tune it:
//
//	SVC_BENCH_REGIONS_LEADER  regions to put the leader in, in turn ("B,A,C")
//	SVC_BENCH_REGIONS_WRITES  sequential creates per region (200)
//	SVC_BENCH_REGIONS_READS   local reads per region (200)
//	SVC_BENCH_REGIONS_RTT     round trips A-B, B-C, A-C ("30ms,80ms,150ms")
const (
	benchRegionsEnv       = "SVC_BENCH_REGIONS"
	benchRegionsLeaderEnv = "SVC_BENCH_REGIONS_LEADER"
	benchRegionsWritesEnv = "SVC_BENCH_REGIONS_WRITES"
	benchRegionsReadsEnv  = "SVC_BENCH_REGIONS_READS"
	benchRegionsRTTEnv    = "SVC_BENCH_REGIONS_RTT"
)

// regionsCollection is the collection the benchmark writes: anyone may
// create and view, so only the write and read paths are measured.
const regionsCollection = `{"name":"regionbench","type":"base","fields":[` +
	`{"name":"seq","type":"number","required":true},{"name":"region","type":"text"}],` +
	`"view_rule":"","create_rule":""}`

// regionsWarmup writes per region are sent and not measured: they open
// the HTTP connection and, on a follower, the forwarding connection
// through the delaying proxy.
const regionsWarmup = 5

// regionsConfig is the benchmark's configuration, read from the
// environment.
type regionsConfig struct {
	regions harness.Regions
	leaders []string // region names
	writes  int
	reads   int
}

// TestBenchRegions starts three svcd nodes in network namespaces with
// region-like round trips between them (harness.Regions) and svcd's default
// Raft timing, puts the leader in each requested region in turn and
// measures, region by region with one client beside the local node: the
// latency of sequential creates through that node and of local reads on
// it. It prints one Markdown table, three rows per leader placement (the
// first placement also before the delays, as a baseline), with the
// latency the round trips alone predict. It is a benchmark, not a check
// of speed: it fails only when a request fails or it cannot run (no root,
// ip or nft).
func TestBenchRegions(t *testing.T) {
	if os.Getenv(benchRegionsEnv) != "1" {
		t.Skipf("region benchmark: set %s=1 (make bench-regions)", benchRegionsEnv)
	}
	if err := harness.NetworkSupported(); err != nil {
		t.Fatal(err)
	}
	cfg, err := regionsConfigFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	r := cfg.regions
	nodeEnv := map[string][]string{}
	for i, n := range r.Nodes {
		nodeEnv[n] = []string{"SVC_REGION=" + r.Names[i]}
	}
	c := harness.StartCluster(t, len(r.Nodes), harness.ClusterOptions{
		Netns:   true,
		Env:     []string{"SVC_LOG_LEVEL=warn"},
		NodeEnv: nodeEnv,
	})
	leader := c.MustLeader(t, leaderTimeout)
	createRegionsCollection(t, c.Admin(leader))
	if _, err := c.Converge(30 * time.Second); err != nil {
		t.Fatal(err)
	}

	var out strings.Builder
	fmt.Fprintf(&out, "\nregion benchmark %s, svcd default Raft timing, round trips %s\n",
		time.Now().UTC().Format("2006-01-02"), describeRTTs(r))
	fmt.Fprintf(&out, "%d sequential creates and %d local reads per region, one client at a time beside its node\n\n", cfg.writes, cfg.reads)
	writeRegionsHeader(&out)
	// The same cluster before any delay: what disk syncs and processing
	// cost on this machine, the part of every figure the model leaves out.
	first := cfg.leaders[0]
	measurePlacement(t, c, cfg, first, first+", no delay", harness.Regions{Nodes: r.Nodes, Names: r.Names}, &out)
	if err := r.Apply(c.Network()); err != nil {
		t.Fatal(err)
	}
	t.Logf("round trips: %s", describeRTTs(r))
	for _, name := range cfg.leaders {
		measurePlacement(t, c, cfg, name, name, r, &out)
	}
	fmt.Println(out.String())
}

// measurePlacement puts the leader in region leader and writes one table
// row per region, labelled label, with the model of r's round trips.
func measurePlacement(t *testing.T, c *harness.Cluster, cfg regionsConfig, leader, label string, r harness.Regions, out io.Writer) {
	t.Helper()
	want := r.Nodes[slices.Index(r.Names, leader)]
	placeLeader(t, c, want)
	t.Logf("leader in region %s (%s)", label, want)
	for i, node := range r.Nodes {
		row := measureRegion(t, c, c.Node(node), r.Names[i], cfg)
		row.leaderRegion = label
		row.role = "follower"
		if node == want {
			row.role = "leader"
		}
		row.model = regionsModel(r, node, want)
		writeRegionsRow(out, row)
	}
}

// regionsConfigFromEnv reads the SVC_BENCH_REGIONS_* variables.
func regionsConfigFromEnv() (regionsConfig, error) {
	cfg := regionsConfig{writes: 200, reads: 200}
	rtts := []time.Duration{30 * time.Millisecond, 80 * time.Millisecond, 150 * time.Millisecond}
	if s := os.Getenv(benchRegionsRTTEnv); s != "" {
		parts := strings.Split(s, ",")
		if len(parts) != 3 {
			return cfg, fmt.Errorf("%s: want three round trips A-B,B-C,A-C, got %q", benchRegionsRTTEnv, s)
		}
		for i, p := range parts {
			d, err := time.ParseDuration(strings.TrimSpace(p))
			if err != nil || d <= 0 {
				return cfg, fmt.Errorf("%s: %q is not a positive duration", benchRegionsRTTEnv, p)
			}
			rtts[i] = d
		}
	}
	cfg.regions = harness.ThreeRegions(rtts[0], rtts[1], rtts[2])
	cfg.leaders = []string{"B", "A", "C"}
	if s := os.Getenv(benchRegionsLeaderEnv); s != "" {
		cfg.leaders = nil
		for _, p := range strings.Split(s, ",") {
			p = strings.ToUpper(strings.TrimSpace(p))
			if !slices.Contains(cfg.regions.Names, p) {
				return cfg, fmt.Errorf("%s: no region %q (have %v)", benchRegionsLeaderEnv, p, cfg.regions.Names)
			}
			cfg.leaders = append(cfg.leaders, p)
		}
	}
	for _, v := range []struct {
		env string
		dst *int
	}{{benchRegionsWritesEnv, &cfg.writes}, {benchRegionsReadsEnv, &cfg.reads}} {
		if s := os.Getenv(v.env); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 {
				return cfg, fmt.Errorf("%s: %q is not a positive count", v.env, s)
			}
			*v.dst = n
		}
	}
	return cfg, nil
}

// describeRTTs lists every pair's round trip: "A-B 30ms, A-C 150ms, ...".
func describeRTTs(r harness.Regions) string {
	var parts []string
	for i := range r.Nodes {
		for j := i + 1; j < len(r.Nodes); j++ {
			parts = append(parts, fmt.Sprintf("%s-%s %s", r.Names[i], r.Names[j], r.RTTs[i][j]))
		}
	}
	return strings.Join(parts, ", ")
}

// regionsModel is the write latency the round trips alone predict for a
// write through node when leader leads: the leader commits once its
// nearest follower has acknowledged the entry (one round trip); a follower
// adds its own round trip to the leader (the forwarded command, then the
// leader's answer together with the AppendEntries that tells it of the
// commit). Disk syncs and processing come on top.
func regionsModel(r harness.Regions, node, leader string) time.Duration {
	return r.RTT(node, leader) + r.Nearest(leader)
}

// createRegionsCollection creates the benchmark's collection.
func createRegionsCollection(t *testing.T, admin *harness.Client) {
	t.Helper()
	resp, err := admin.Do(context.Background(), "POST", "/api/v1/admin/collections", []byte(regionsCollection))
	if err != nil {
		t.Fatalf("create collection: %v", err)
	}
	if resp.Status != http.StatusCreated {
		t.Fatalf("create collection: %s", resp)
	}
}

// placeLeader moves the leadership to node id (POST
// /api/v1/admin/cluster/leadership on the current leader) unless it leads
// already, and waits until every node agrees.
func placeLeader(t *testing.T, c *harness.Cluster, id string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		cur := c.MustLeader(t, leaderTimeout)
		if cur.Name == id {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("leadership stays on %s, want %s", cur.Name, id)
		}
		resp, err := c.Admin(cur).Do(context.Background(), "POST", "/api/v1/admin/cluster/leadership", map[string]string{"id": id})
		if err != nil || resp.Status != http.StatusOK {
			t.Logf("transfer leadership %s -> %s: %v %v; retrying", cur.Name, id, resp, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
