package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// clusterOptions are svcd cluster's flags.
type clusterOptions struct {
	nodes     int
	httpAddr  string
	dir       string
	raftBase  int
	logFormat string
}

// clusterFlagSet declares svcd cluster's flags into o.
func clusterFlagSet(o *clusterOptions) *flag.FlagSet {
	fs := flag.NewFlagSet("cluster", flag.ContinueOnError)
	fs.IntVar(&o.nodes, "nodes", defaultWorkers(), "`N` nodes to run (SVC_WORKERS, else the CPU count)")
	fs.StringVar(&o.httpAddr, "http", ":"+envOr("SVC_PORT", "8090"), "`ADDR` every node serves HTTP on, [host]:port (overrides SVC_PORT)")
	fs.StringVar(&o.dir, "dir", envOr("SVC_DATA_DIR", "./svc_data"), "`DIR` of the data: node i keeps its data in DIR/node<i> (SVC_DATA_DIR)")
	fs.IntVar(&o.raftBase, "raft-port", 19300, "Raft `PORT` of node 1 on 127.0.0.1; node i uses raft-port+i-1")
	fs.StringVar(&o.logFormat, "log-format", os.Getenv("SVC_LOG_FORMAT"), logFlagUsage)
	return fs
}

// runCluster is `svcd cluster --nodes N`: N child nodes on this machine,
// one Raft cluster, all serving the same HTTP port (SO_REUSEPORT). The
// parent respawns a child that dies and drains all of them on SIGTERM.
// The children write to the parent's output in its log format, each line
// naming its node (node1 ... nodeN; the parent's own lines name
// "cluster"), and the parent prints the one banner once the cluster
// serves.
func runCluster(args []string) error {
	var o clusterOptions
	fs := clusterFlagSet(&o)
	if err := parseArgs(fs, args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return usageErrorf("unexpected argument %q", fs.Arg(0))
	case o.nodes < 1:
		return usageErrorf("--nodes must be at least 1")
	}
	if err := checkLogFormat(o.logFormat); err != nil {
		return &usageError{msg: "--log-format: " + err.Error()}
	}
	lo, err := logEnv(slog.LevelInfo)
	if err != nil {
		return err
	}
	lo.format = o.logFormat
	lo = lo.resolve(os.Stderr)
	logs := newLogger(os.Stderr, lo)
	useAsDefault(logs.With("node", "cluster"))
	base, err := filepath.Abs(o.dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(base, 0o700); err != nil {
		return err
	}
	key, err := clusterKeyFile(filepath.Join(base, "cluster.key"))
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	joinURL := "http://" + loopbackFor(o.httpAddr)
	sup := &supervisor{logs: logs, stop: make(chan struct{})}
	for i := 1; i <= o.nodes; i++ {
		c := &child{
			name: fmt.Sprintf("node%d", i),
			bin:  self,
			dir:  filepath.Join(base, fmt.Sprintf("node%d", i)),
			// The children log in the format chosen here: their output
			// is this process's.
			env: append(os.Environ(), "SVC_CLUSTER_KEY="+key, "SVC_LOG_FORMAT="+lo.format),
		}
		c.args = []string{"serve", "--http", o.httpAddr, "--reuse-port", "--node-id", c.name,
			"--raft-addr", "127.0.0.1:" + strconv.Itoa(o.raftBase+i-1)}
		if i == 1 {
			c.args = append(c.args, "--bootstrap")
		} else {
			c.args = append(c.args, "--join", joinURL)
		}
		c.args = append(c.args, "--no-banner")
		c.env = append(c.env, "SVC_DATA_DIR="+c.dir)
		sup.children = append(sup.children, c)
	}
	sup.log().Info("starting nodes", "nodes", o.nodes, "http", o.httpAddr, "data", base)
	raftPorts := strconv.Itoa(o.raftBase)
	if o.nodes > 1 {
		raftPorts += "-" + strconv.Itoa(o.raftBase+o.nodes-1)
	}
	b := &banner{build: readBuildInfo(), url: joinURL, dataDir: base + " (node<i>/ for each node)",
		what:      fmt.Sprintf("%d nodes, node1 to node%d (raft 127.0.0.1:%s)", o.nodes, o.nodes, raftPorts),
		createCmd: "svcd admin create --dir " + sup.children[0].dir}
	go sup.announce(b, lo.format)
	return sup.run()
}

func defaultWorkers() int {
	if n, err := strconv.Atoi(os.Getenv("SVC_WORKERS")); err == nil && n > 0 {
		return n
	}
	return runtime.NumCPU()
}

// loopbackFor turns a listen address into one a child can dial.
func loopbackFor(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

// clusterKeyFile reads the local cluster's key, creating it (0600) once.
func clusterKeyFile(path string) (string, error) {
	if b, err := os.ReadFile(path); err == nil {
		return strings.TrimSpace(string(b)), nil
	}
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		return "", err
	}
	key := hex.EncodeToString(k)
	return key, os.WriteFile(path, []byte(key+"\n"), 0o600)
}

type child struct {
	name, bin, dir string
	args, env      []string
	mu             sync.Mutex
	cmd            *exec.Cmd
}

type supervisor struct {
	logs     *slog.Logger // no node attribute: log and logFor add it
	children []*child
	stop     chan struct{}
	wg       sync.WaitGroup
}

// run starts every child (the first must lead before the others join),
// respawns those that exit, and drains all on SIGTERM or SIGINT.
func (s *supervisor) run() error {
	sigc := make(chan os.Signal, 1)
	signal.Notify(sigc, syscall.SIGTERM, syscall.SIGINT)
	for i, c := range s.children {
		s.wg.Add(1)
		go s.keep(c)
		if i == 0 {
			time.Sleep(time.Second) // let the bootstrap node elect itself
		}
	}
	sig := <-sigc
	s.log().Info("draining every node", "signal", sig.String())
	close(s.stop)
	for _, c := range s.children {
		c.signal(syscall.SIGTERM)
	}
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		for _, c := range s.children {
			c.signal(syscall.SIGKILL)
		}
		<-done
	}
	return nil
}

// keep runs one child until the supervisor stops, restarting it when it
// exits (with a short backoff so a crash loop does not spin).
func (s *supervisor) keep(c *child) {
	defer s.wg.Done()
	backoff := 500 * time.Millisecond
	for {
		cmd := exec.Command(c.bin, c.args...)
		cmd.Env = c.env
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		c.mu.Lock()
		c.cmd = cmd
		err := cmd.Start()
		c.mu.Unlock()
		if err == nil {
			err = cmd.Wait()
		}
		select {
		case <-s.stop:
			return
		default:
		}
		if err == nil {
			// It stopped cleanly: someone sent it SIGTERM (a restart).
			s.logFor(c).Info("node stopped; starting it again")
		} else {
			s.logFor(c).Warn("node exited; starting it again", "err", err, "after", backoff.String())
		}
		ctx, cancel := context.WithTimeout(context.Background(), backoff)
		select {
		case <-s.stop:
			cancel()
			return
		case <-ctx.Done():
		}
		cancel()
		backoff = min(backoff*2, 10*time.Second)
	}
}

// log is the supervisor's own log: node "cluster".
func (s *supervisor) log() *slog.Logger { return s.logs.With("node", "cluster") }

// logFor is the log of the supervisor's lines about child c.
func (s *supervisor) logFor(c *child) *slog.Logger { return s.logs.With("node", c.name) }

// announce prints the banner once the cluster serves: once /_/ready
// answers 200 on the shared port (a node that has a leader and has
// caught up), or after a minute with what is wrong.
func (s *supervisor) announce(b *banner, format string) {
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(time.Minute)
	for {
		select {
		case <-s.stop:
			return
		case <-time.After(200 * time.Millisecond):
		}
		resp, err := client.Get(b.url + "/_/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
			err = fmt.Errorf("/_/ready answers %s", resp.Status)
		}
		if time.Now().After(deadline) {
			b.notReady = err
			break
		}
	}
	var status struct {
		Data struct {
			HasAdmin         bool `json:"has_admin"`
			SetupKeyRequired bool `json:"setup_key_required"`
		} `json:"data"`
	}
	if resp, err := client.Get(b.url + "/api/v1/admin/setup/status"); err == nil {
		if json.NewDecoder(resp.Body).Decode(&status) == nil {
			b.noAdmin, b.setupKey = !status.Data.HasAdmin, status.Data.SetupKeyRequired
		}
		resp.Body.Close()
	}
	b.print(os.Stderr, s.log(), format)
}

func (c *child) signal(sig os.Signal) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmd != nil && c.cmd.Process != nil {
		c.cmd.Process.Signal(sig)
	}
}
