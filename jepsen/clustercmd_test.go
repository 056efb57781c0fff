package jepsen_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"svcd/jepsen/harness"
)

// TestClusterCommand: `svcd cluster --nodes 3` runs three nodes that serve
// one HTTP port and form one Raft cluster; a node killed with SIGKILL is
// respawned and rejoins; SIGTERM to the parent drains every node.
func TestClusterCommand(t *testing.T) {
	skipShort(t)
	bin := harness.BuildBinary(t)
	ports, err := harness.FreePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	addr := "127.0.0.1:" + strconv.Itoa(ports[0])
	cmd := exec.Command(bin, "cluster", "--nodes", "3", "--http", addr, "--dir", filepath.Join(dir, "data"),
		"--raft-port", strconv.Itoa(ports[1]+100))
	cmd.Env = append(os.Environ(), "SVC_LOG_LEVEL=warn")
	logf, _ := os.Create(filepath.Join(dir, "cluster.log"))
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(dir, "cluster.log"))
			t.Logf("cluster log (tail):\n%s", tail(b, 4000))
		}
	})

	// Every node answers on the shared port; one of them leads.
	seen := waitNodes(t, "http://"+addr, 3, 30*time.Second)
	t.Logf("nodes seen on %s: %v", addr, seen)

	// Kill one child: the parent respawns it and it rejoins.
	out, err := exec.Command("pgrep", "-f", "serve --http "+addr+" --reuse-port --node-id node2").Output()
	if err != nil {
		t.Fatalf("pgrep node2: %v", err)
	}
	pid, _ := strconv.Atoi(strings.Fields(string(out))[0])
	syscall.Kill(pid, syscall.SIGKILL)
	time.Sleep(500 * time.Millisecond)
	if got := waitNodes(t, "http://"+addr, 3, 30*time.Second); len(got) != 3 {
		t.Fatalf("after killing node2: %v", got)
	}
	if out, err := exec.Command("pgrep", "-f", "serve --http "+addr+" --reuse-port --node-id node2").Output(); err != nil || strings.TrimSpace(string(out)) == strconv.Itoa(pid) {
		t.Fatalf("node2 was not respawned (pgrep %q, %v)", out, err)
	}

	// SIGTERM drains everything.
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(40 * time.Second):
		t.Fatal("svcd cluster did not exit after SIGTERM")
	}
	if out, err := exec.Command("pgrep", "-f", "serve --http "+addr).Output(); err == nil {
		t.Fatalf("nodes still running after the drain: %s", out)
	}
}

// waitNodes polls /_/cluster on the shared port until n distinct healthy
// node ids have answered with one agreed leader, or the timeout passes.
func waitNodes(t *testing.T, base string, n int, timeout time.Duration) map[string]string {
	t.Helper()
	client := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	seen := map[string]string{}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		resp, err := client.Get(base + "/_/cluster")
		if err == nil {
			var s struct {
				NodeID   string `json:"node_id"`
				LeaderID string `json:"leader_id"`
				Healthy  bool   `json:"healthy"`
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if json.Unmarshal(b, &s) == nil && s.Healthy {
				seen[s.NodeID] = s.LeaderID
			}
		}
		if len(seen) >= n {
			leaders := map[string]bool{}
			for _, l := range seen {
				leaders[l] = true
			}
			if len(leaders) == 1 {
				return seen
			}
			seen = map[string]string{}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("only %d of %d nodes answered healthy on %s: %v", len(seen), n, base, seen)
	return nil
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return fmt.Sprint(string(b))
}
