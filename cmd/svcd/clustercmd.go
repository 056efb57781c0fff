package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
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

// runCluster is `svcd cluster --nodes N`: N child nodes on this machine,
// one Raft cluster, all serving the same HTTP port (SO_REUSEPORT). The
// parent respawns a child that dies and drains all of them on SIGTERM.
func runCluster(args []string) error {
	fs := flag.NewFlagSet("cluster", flag.ContinueOnError)
	nodes := fs.Int("nodes", defaultWorkers(), "number of nodes (SVC_WORKERS)")
	port := envOr("SVC_PORT", "8090")
	httpAddr := fs.String("http", ":"+port, "shared HTTP listen address")
	dir := fs.String("dir", envOr("SVC_DATA_DIR", "./svc_data"), "data directory; node i keeps its data in <dir>/node<i>")
	raftBase := fs.Int("raft-port", 19300, "Raft port of node 1 on 127.0.0.1; node i uses raft-port+i-1")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *nodes < 1 {
		return errors.New("cluster: --nodes must be at least 1")
	}
	base, err := filepath.Abs(*dir)
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
	log := newLogger(slog.LevelInfo)
	joinURL := "http://" + loopbackFor(*httpAddr)
	sup := &supervisor{log: log, stop: make(chan struct{})}
	for i := 1; i <= *nodes; i++ {
		c := &child{
			name: fmt.Sprintf("node%d", i),
			bin:  self,
			dir:  filepath.Join(base, fmt.Sprintf("node%d", i)),
			env:  append(os.Environ(), "SVC_CLUSTER_KEY="+key),
		}
		c.args = []string{"serve", "--http", *httpAddr, "--reuse-port", "--node-id", c.name,
			"--raft-addr", "127.0.0.1:" + strconv.Itoa(*raftBase+i-1)}
		if i == 1 {
			c.args = append(c.args, "--bootstrap")
		} else {
			c.args = append(c.args, "--join", joinURL)
		}
		c.env = append(c.env, "SVC_DATA_DIR="+c.dir)
		sup.children = append(sup.children, c)
	}
	fmt.Fprintf(os.Stderr, "svcd cluster: %d nodes serving %s, data under %s\n", *nodes, *httpAddr, base)
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
	log      *slog.Logger
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
	s.log.Info("svcd cluster: draining", "signal", sig.String())
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
		s.log.Warn("svcd cluster: node exited; restarting", "node", c.name, "err", err)
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

func (c *child) signal(sig os.Signal) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmd != nil && c.cmd.Process != nil {
		c.cmd.Process.Signal(sig)
	}
}
