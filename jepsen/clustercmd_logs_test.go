package jepsen_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
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

// TestClusterCommandLogs: the log of `svcd cluster --nodes 3` reads as
// one: through the start (node2 and node3 join), a write, the restart of
// a follower and then of the leader (SIGTERM to the child: the parent
// starts it again and it rejoins), and the drain, every line is one JSON
// record that names its node (node1..node3, or "cluster" for the
// parent), none is an ERROR, and the banner is printed once. The peers'
// refused connections during the joins and restarts are there, as INFO
// and DEBUG records that say how long the peer was unreachable. Logged at
// DEBUG, so raft's and the request log's lines are checked too.
func TestClusterCommandLogs(t *testing.T) {
	skipShort(t)
	bin := harness.BuildBinary(t)
	ports, err := harness.FreePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	addr := "127.0.0.1:" + strconv.Itoa(ports[0])
	base := "http://" + addr
	logPath := filepath.Join(dir, "cluster.log")
	cmd := exec.Command(bin, "cluster", "--nodes", "3", "--http", addr, "--dir", filepath.Join(dir, "data"),
		"--raft-port", strconv.Itoa(ports[1]+100))
	cmd.Env = append(os.Environ(), "SVC_LOG_LEVEL=debug", "SVC_LOG_FORMAT=")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
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
			b, _ := os.ReadFile(logPath)
			t.Logf("cluster log (tail):\n%s", tail(b, 6000))
		}
	})

	waitNodes(t, base, 3, 30*time.Second)
	waitLogLine(t, logPath, `"msg":"svcd serving"`, 30*time.Second)
	// A write through Raft: the first admin.
	resp, err := http.Post(base+"/api/v1/admin/setup", "application/json",
		strings.NewReader(`{"email":"owner@example.com","password":"correct-horse-battery"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode >= 300 {
		t.Fatalf("admin setup: %s", resp.Status)
	}

	// Restart a follower, then the leader.
	for _, which := range []string{"follower", "leader"} {
		leader := waitNodes(t, base, 3, 30*time.Second)
		victim := ""
		for id, l := range leader {
			if (which == "leader") == (id == l) {
				victim = id
				break
			}
		}
		pid := childPid(t, addr, victim)
		t.Logf("restarting the %s, %s (pid %d)", which, victim, pid)
		syscall.Kill(pid, syscall.SIGTERM)
		deadline := time.Now().Add(30 * time.Second)
		for {
			if p := childPidOrZero(addr, victim); p != 0 && p != pid {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s was not started again", victim)
			}
			time.Sleep(50 * time.Millisecond)
		}
		waitNodes(t, base, 3, 30*time.Second)
	}

	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(40 * time.Second):
		t.Fatal("svcd cluster did not exit after SIGTERM")
	}

	b, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	byNode := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	lines := 0
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			continue
		}
		lines++
		var rec struct {
			Level, Msg, Node string
			Unreachable      string `json:"unreachable_for"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Errorf("not one JSON record: %q", line)
			continue
		}
		switch rec.Node {
		case "cluster", "node1", "node2", "node3":
			byNode[rec.Node]++
		default:
			t.Errorf("a line that names no node of the cluster: %s", line)
		}
		if rec.Level == "ERROR" {
			t.Errorf("an ERROR in a normal start, join and restart: %s", line)
		}
		count[rec.Msg]++
		if rec.Unreachable != "" {
			count["(unreachable peer)"]++
		}
	}
	t.Logf("%d lines; by node %v; %d refused connections to peers starting or restarting, not errors",
		lines, byNode, count["(unreachable peer)"])
	for _, c := range []struct {
		msg  string
		want int
	}{
		{"svcd serving", 1},
		{"joined the cluster", 2},
		{"node stopped; starting it again", 2},
		{"checked the Raft log", 5},
		{"draining every node", 1},
	} {
		if count[c.msg] != c.want {
			t.Errorf("%d records %q, want %d", count[c.msg], c.msg, c.want)
		}
	}
	if count["(unreachable peer)"] == 0 {
		t.Error("no refused connection to a starting or restarting peer was logged: the joins and restarts went unseen")
	}
	for _, n := range []string{"cluster", "node1", "node2", "node3"} {
		if byNode[n] == 0 {
			t.Errorf("no line of %s", n)
		}
	}
}

// childPid is the pid of the svcd cluster child named name serving addr.
func childPid(t *testing.T, addr, name string) int {
	t.Helper()
	pid := childPidOrZero(addr, name)
	if pid == 0 {
		t.Fatalf("no process for %s", name)
	}
	return pid
}

func childPidOrZero(addr, name string) int {
	out, err := exec.Command("pgrep", "-f", "serve --http "+addr+" --reuse-port --node-id "+name+" ").Output()
	if err != nil {
		return 0
	}
	f := strings.Fields(string(out))
	if len(f) == 0 {
		return 0
	}
	pid, _ := strconv.Atoi(f[0])
	return pid
}

// waitLogLine waits until the file at path holds a line containing s.
func waitLogLine(t *testing.T, path, s string, timeout time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for ctx.Err() == nil {
		if b, err := os.ReadFile(path); err == nil && bytes.Contains(b, []byte(s)) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s holds no %s after %s", path, s, timeout)
}
