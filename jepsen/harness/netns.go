package harness

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Network puts every node of a cluster in its own Linux network namespace,
// joined by veth pairs to one bridge in the test's namespace, so faults cut
// real traffic: each node's input hook (nftables) drops what a fault says,
// Raft, forwarding and gossip alike, while the test's clients (on the
// bridge address) always reach every node, as Jepsen's control node does.
//
// It needs root, iproute2 and nft. Names carry the test process's pid, so
// leftovers of a crashed run are recognised and removed by the next one.
type Network struct {
	prefix string // "sj<pid base 36>-<seq>", at most 9 bytes
	subnet string // "10.213.N"
	bridge string

	mu    sync.Mutex
	nodes map[string]*netNode
	// drops[to][from] is the percentage of packets from `from` that `to`
	// drops (100 = all).
	drops map[string]map[string]int
	// delays[from][to] redirects from's TCP traffic to `to` through a
	// delaying proxy.
	delays map[string]map[string][]*delayLink
	closed bool
}

type netNode struct {
	ns, veth, ip string
}

// NetworkPorts are the ports every namespaced node listens on (its own
// address makes them unique).
const (
	NetHTTPPort   = 8090
	NetRaftPort   = 7000
	NetGossipPort = 7946
)

var netSeq atomic.Int32

// NetworkSupported reports why namespaced networks cannot run here (nil
// when they can): root, ip and nft are needed.
func NetworkSupported() error {
	if os.Geteuid() != 0 {
		return errors.New("network faults need root (ip netns, nft)")
	}
	for _, bin := range []string{"ip", "nft"} {
		if _, err := exec.LookPath(bin); err != nil {
			return fmt.Errorf("network faults need %s (apt-get install iproute2 nftables): %w", bin, err)
		}
	}
	return nil
}

// NewNetwork creates the bridge with a fresh 10.213.N.0/24 subnet. Close
// removes everything it created.
func NewNetwork() (*Network, error) {
	if err := NetworkSupported(); err != nil {
		return nil, err
	}
	removeStaleNetworks()
	seq := netSeq.Add(1)
	nw := &Network{
		prefix: "sj" + strconv.FormatInt(int64(os.Getpid()), 36) + "-" + strconv.FormatInt(int64(seq%36), 36),
		nodes:  map[string]*netNode{},
		drops:  map[string]map[string]int{},
		delays: map[string]map[string][]*delayLink{},
	}
	nw.bridge = nw.prefix + "-br"
	used, err := run("ip", "-4", "-o", "addr", "show")
	if err != nil {
		return nil, err
	}
	for n := 1 + (os.Getpid()+int(seq)*7)%200; ; n++ {
		if n > 250 {
			return nil, errors.New("netns: no free 10.213.N.0/24 subnet")
		}
		s := "10.213." + strconv.Itoa(n)
		if !strings.Contains(used, " "+s+".") {
			nw.subnet = s
			break
		}
	}
	steps := [][]string{
		{"ip", "link", "add", nw.bridge, "type", "bridge"},
		{"ip", "addr", "add", nw.subnet + ".1/24", "dev", nw.bridge},
		{"ip", "link", "set", nw.bridge, "up"},
	}
	for _, s := range steps {
		if _, err := run(s...); err != nil {
			nw.Close()
			return nil, err
		}
	}
	return nw, nil
}

// HostIP is the test's own address on the bridge.
func (nw *Network) HostIP() string { return nw.subnet + ".1" }

// Add creates node name's namespace and returns its address and the
// namespace's name. Adding an existing name answers the same.
func (nw *Network) Add(name string) (ip, ns string, err error) {
	nw.mu.Lock()
	defer nw.mu.Unlock()
	if n, ok := nw.nodes[name]; ok {
		return n.ip, n.ns, nil
	}
	if nw.closed {
		return "", "", errors.New("netns: network closed")
	}
	i := len(nw.nodes) + 11
	n := &netNode{ns: nw.prefix + "-" + name, veth: nw.prefix + "-v" + strconv.Itoa(i), ip: nw.subnet + "." + strconv.Itoa(i)}
	if len(n.ns) > 15 || len(n.veth) > 15 {
		return "", "", fmt.Errorf("netns: name %q too long", name)
	}
	steps := [][]string{
		{"ip", "netns", "add", n.ns},
		{"ip", "link", "add", n.veth, "type", "veth", "peer", "name", "eth0", "netns", n.ns},
		{"ip", "link", "set", n.veth, "master", nw.bridge, "up"},
		{"ip", "-n", n.ns, "addr", "add", n.ip + "/24", "dev", "eth0"},
		{"ip", "-n", n.ns, "link", "set", "eth0", "up"},
		{"ip", "-n", n.ns, "link", "set", "lo", "up"},
	}
	for _, s := range steps {
		if _, err := run(s...); err != nil {
			run("ip", "netns", "del", n.ns)
			return "", "", err
		}
	}
	nw.nodes[name] = n
	return n.ip, n.ns, nw.applyLocked(name)
}

// IP is node name's address ("" when unknown).
func (nw *Network) IP(name string) string {
	nw.mu.Lock()
	defer nw.mu.Unlock()
	if n, ok := nw.nodes[name]; ok {
		return n.ip
	}
	return ""
}

// Names are the nodes with a namespace, sorted.
func (nw *Network) Names() []string {
	nw.mu.Lock()
	defer nw.mu.Unlock()
	var out []string
	for n := range nw.nodes {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Drop makes node `to` drop pct percent (1-100) of the packets it receives
// from node `from`: one direction of one link.
func (nw *Network) Drop(from, to string, pct int) error {
	nw.mu.Lock()
	defer nw.mu.Unlock()
	if nw.drops[to] == nil {
		nw.drops[to] = map[string]int{}
	}
	nw.drops[to][from] = min(max(pct, 0), 100)
	return nw.applyLocked(to)
}

// Cut drops every packet between a and b, both ways.
func (nw *Network) Cut(a, b string) error {
	return errors.Join(nw.Drop(a, b, 100), nw.Drop(b, a, 100))
}

// Partition cuts every link between nodes of different groups; nodes of
// no group keep every link (a bridge node, for example).
func (nw *Network) Partition(groups ...[]string) error {
	var errs []error
	for i, g := range groups {
		for _, h := range groups[i+1:] {
			for _, a := range g {
				for _, b := range h {
					errs = append(errs, nw.Cut(a, b))
				}
			}
		}
	}
	return errors.Join(errs...)
}

// Heal removes every drop and delay.
func (nw *Network) Heal() error {
	nw.mu.Lock()
	defer nw.mu.Unlock()
	nw.drops = map[string]map[string]int{}
	nw.closeProxiesLocked()
	nw.delays = map[string]map[string][]*delayLink{}
	var errs []error
	for name := range nw.nodes {
		errs = append(errs, nw.applyLocked(name))
	}
	return errors.Join(errs...)
}

// applyLocked replaces node name's nftables ruleset with one holding its
// current drops and delay redirections, atomically.
func (nw *Network) applyLocked(name string) error {
	n, ok := nw.nodes[name]
	if !ok {
		return fmt.Errorf("netns: no node %s", name)
	}
	var b strings.Builder
	b.WriteString("add table inet svcj\ndelete table inet svcj\ntable inet svcj {\n")
	b.WriteString("  chain drops {\n    type filter hook input priority 0; policy accept;\n")
	for _, from := range slices.Sorted(maps.Keys(nw.drops[name])) {
		src, ok := nw.nodes[from]
		pct := nw.drops[name][from]
		if !ok || pct <= 0 {
			continue
		}
		if pct >= 100 {
			fmt.Fprintf(&b, "    ip saddr %s drop\n", src.ip)
		} else {
			fmt.Fprintf(&b, "    ip saddr %s numgen random mod 100 < %d drop\n", src.ip, pct)
		}
	}
	b.WriteString("  }\n")
	// Delayed links: new connections are redirected to the proxy (nat),
	// and packets of older ones, still addressed to the node itself after
	// the nat hook, are answered with a reset so their owner re-dials.
	var nat, reset strings.Builder
	for _, to := range slices.Sorted(maps.Keys(nw.delays[name])) {
		for _, l := range nw.delays[name][to] {
			fmt.Fprintf(&nat, "    ip daddr %s tcp dport %d dnat ip to %s\n", nw.nodes[to].ip, l.port, l.proxy.Addr())
			fmt.Fprintf(&reset, "    ip daddr %s tcp dport %d reject with tcp reset\n", nw.nodes[to].ip, l.port)
		}
	}
	b.WriteString("  chain delaynat {\n    type nat hook output priority -100; policy accept;\n")
	b.WriteString(nat.String())
	b.WriteString("  }\n")
	b.WriteString("  chain delayreset {\n    type filter hook output priority 0; policy accept;\n")
	b.WriteString(reset.String())
	b.WriteString("  }\n}\n")
	cmd := exec.Command("ip", "netns", "exec", n.ns, "nft", "-f", "-")
	cmd.Stdin = strings.NewReader(b.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("netns: nft in %s: %v: %s\nruleset:\n%s", n.ns, err, out, b.String())
	}
	return nil
}

// Close removes the namespaces, the bridge and the proxies.
func (nw *Network) Close() error {
	nw.mu.Lock()
	defer nw.mu.Unlock()
	nw.closed = true
	nw.closeProxiesLocked()
	var errs []error
	for _, n := range nw.nodes {
		if _, err := run("ip", "netns", "del", n.ns); err != nil {
			errs = append(errs, err)
		}
	}
	run("ip", "link", "del", nw.bridge)
	return errors.Join(errs...)
}

func (nw *Network) closeProxiesLocked() {
	for _, to := range nw.delays {
		for _, links := range to {
			for _, l := range links {
				l.proxy.Close()
			}
		}
	}
}

// removeStaleNetworks deletes namespaces and bridges named after a test
// process that is gone.
func removeStaleNetworks() {
	nsOut, _ := run("ip", "netns", "list")
	for _, line := range strings.Split(nsOut, "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && staleName(f[0]) {
			run("ip", "netns", "del", f[0])
		}
	}
	linkOut, _ := run("ip", "-o", "link", "show", "type", "bridge")
	for _, line := range strings.Split(linkOut, "\n") {
		f := strings.Fields(line)
		if len(f) > 1 {
			name := strings.TrimSuffix(f[1], ":")
			if staleName(name) {
				run("ip", "link", "del", name)
			}
		}
	}
}

// staleName reports whether name looks like "sj<pid base 36>-..." for a
// pid that no longer runs.
func staleName(name string) bool {
	rest, ok := strings.CutPrefix(name, "sj")
	if !ok {
		return false
	}
	pidText, _, ok := strings.Cut(rest, "-")
	if !ok {
		return false
	}
	pid, err := strconv.ParseInt(pidText, 36, 64)
	if err != nil || pid <= 0 || pid > 1<<22 {
		return false
	}
	return errors.Is(syscall.Kill(int(pid), 0), syscall.ESRCH)
}

// run runs a command and returns its output, or an error that includes it.
func run(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, args[0], args[1:]...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}
