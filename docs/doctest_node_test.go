package docs

import (
	"crypto/rand"
	"encoding/hex"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// This file builds svcd once and starts the fresh nodes the docs run
// against: real processes on loopback ports, each with its own data
// directory.

var svcdBuild struct {
	once sync.Once
	path string
	err  error
	out  []byte
}

// buildSvcd builds ./cmd/svcd (with the sqlite_fts5 tag) into a
// directory of the test's process and returns that directory, which the
// examples get on their PATH.
func buildSvcd(t *testing.T) string {
	t.Helper()
	svcdBuild.once.Do(func() {
		dir, err := os.MkdirTemp("", "svcd-doctest-bin-")
		if err != nil {
			svcdBuild.err = err
			return
		}
		svcdBuild.path = dir
		cmd := exec.Command("go", "build", "-tags", "sqlite_fts5", "-o", filepath.Join(dir, "svcd"), "svcd/cmd/svcd")
		cmd.Dir = ".."
		svcdBuild.out, svcdBuild.err = cmd.CombinedOutput()
	})
	if svcdBuild.err != nil {
		t.Fatalf("build svcd: %v\n%s", svcdBuild.err, svcdBuild.out)
	}
	return svcdBuild.path
}

// A node is one running svcd serve.
type node struct {
	id      string
	addr    string // 127.0.0.1:port
	docPort string // the port the docs write for it: 8090, 8091, 8092
	cmd     *exec.Cmd
	log     string // its log file
}

// freePort returns a loopback port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startNode starts `svcd serve` with args on a free port and a data
// directory under dir, and stops it when the test ends.
func startNode(t *testing.T, bin, dir, id string, env []string, args ...string) *node {
	t.Helper()
	n := &node{id: id, addr: "127.0.0.1:" + strconv.Itoa(freePort(t)), log: filepath.Join(dir, id+".log")}
	logf, err := os.Create(n.log)
	if err != nil {
		t.Fatal(err)
	}
	n.cmd = exec.Command(filepath.Join(bin, "svcd"), append([]string{"serve", "--http", n.addr}, args...)...)
	n.cmd.Env = append(baseEnv(bin, dir), append([]string{"SVC_DATA_DIR=" + filepath.Join(dir, id), "SVC_LOG_LEVEL=warn"}, env...)...)
	n.cmd.Stdout, n.cmd.Stderr = logf, logf
	n.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := n.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		n.cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { n.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			n.cmd.Process.Kill()
			<-done
		}
		logf.Close()
	})
	return n
}

// waitReady waits until every node's /_/ready answers 200.
func waitReady(t *testing.T, nodes ...*node) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for _, n := range nodes {
		for {
			resp, err := http.Get("http://" + n.addr + "/_/ready")
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					break
				}
			}
			if time.Now().After(deadline) {
				b, _ := os.ReadFile(n.log)
				t.Fatalf("node %s at %s not ready after 30 s; its log:\n%s", n.id, n.addr, b)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// baseEnv is the environment of the nodes and of the examples' shell:
// nothing of the test's own environment but PATH (with svcd first),
// HOME and the locale.
func baseEnv(bin, dir string) []string {
	return []string{
		"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + dir,
		"LANG=C.UTF-8",
	}
}

// A setup says what a doc runs against (see docs/README.md).
type setup struct {
	// env of every node, beyond SVC_DATA_DIR and SVC_LOG_LEVEL=warn.
	env []string
	// cluster: three nodes (eu-1 bootstraps and leads, us-1 and ap-1
	// join) instead of one.
	cluster bool
}

// startSetup starts the nodes of su and returns them, the first at
// localhost:8090's place, the next at 8091's and 8092's.
func startSetup(t *testing.T, bin, dir string, su setup) []*node {
	t.Helper()
	if !su.cluster {
		n := startNode(t, bin, dir, "node", su.env)
		n.docPort = "8090"
		waitReady(t, n)
		return []*node{n}
	}
	key := make([]byte, 32)
	rand.Read(key)
	env := append([]string{"SVC_CLUSTER_KEY=" + hex.EncodeToString(key)}, su.env...)
	regions := []struct{ id, region string }{{"eu-1", "eu-west"}, {"us-1", "us-east"}, {"ap-1", "ap-south"}}
	var nodes []*node
	for i, r := range regions {
		args := []string{"--node-id", r.id, "--raft-addr", "127.0.0.1:" + strconv.Itoa(freePort(t)), "--region", r.region}
		if i == 0 {
			args = append(args, "--bootstrap")
		} else {
			args = append(args, "--join", "http://"+nodes[0].addr)
		}
		n := startNode(t, bin, dir, r.id, env, args...)
		n.docPort = strconv.Itoa(8090 + i)
		nodes = append(nodes, n)
		if i == 0 {
			waitReady(t, n) // the others join through it
		}
	}
	waitReady(t, nodes...)
	return nodes
}

// substituter returns the function that points an example at the nodes:
// localhost:8090 (or 127.0.0.1:8090) becomes the first node's address,
// 8091 the second's, 8092 the third's.
func substituter(nodes []*node) func(string) string {
	var pairs []string
	for _, n := range nodes {
		pairs = append(pairs, "localhost:"+n.docPort, n.addr, "127.0.0.1:"+n.docPort, n.addr)
	}
	return strings.NewReplacer(pairs...).Replace
}
