package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// servedNode is a running `svcd serve` whose stderr is collected.
type servedNode struct {
	cmd   *exec.Cmd
	mu    sync.Mutex
	lines []string
	done  chan error
}

// startServe runs svcd serve on a loopback port the system picks, in
// dataDir, with args added.
func startServe(t *testing.T, dataDir string, env []string, args ...string) *servedNode {
	t.Helper()
	cmd := exec.Command(svcdBinary(t), append([]string{"serve", "--http", "127.0.0.1:0", "--dir", dataDir}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	n := &servedNode{cmd: cmd, done: make(chan error, 1)}
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64*1024), 1<<20)
		for sc.Scan() {
			n.mu.Lock()
			n.lines = append(n.lines, sc.Text())
			n.mu.Unlock()
		}
		n.done <- cmd.Wait()
	}()
	t.Cleanup(func() { cmd.Process.Kill() })
	return n
}

// wait waits until a line matches re and returns it.
func (n *servedNode) wait(t *testing.T, re *regexp.Regexp) string {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		n.mu.Lock()
		for _, l := range n.lines {
			if re.MatchString(l) {
				n.mu.Unlock()
				return l
			}
		}
		n.mu.Unlock()
	}
	t.Fatalf("no line matching %s within 30 s:\n%s", re, strings.Join(n.output(), "\n"))
	return ""
}

func (n *servedNode) output() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.lines...)
}

// stop sends SIGTERM and waits for a clean exit.
func (n *servedNode) stop(t *testing.T) []string {
	t.Helper()
	n.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-n.done:
		if err != nil {
			t.Errorf("svcd serve exited with %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("svcd serve did not stop within 30 s of SIGTERM")
	}
	return n.output()
}

// getOK asserts that GET url answers 200.
func getOK(t *testing.T, url string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Errorf("GET %s: %v", url, err)
		return
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET %s: %s", url, resp.Status)
	}
}

// TestServeLogJSON: when stderr is not a terminal, every line svcd serve
// writes (its own, raft's) is a JSON record naming the node; the banner is
// one record, printed once, whose links answer 200; a start and a clean
// stop log no error.
func TestServeLogJSON(t *testing.T) {
	dir := t.TempDir()
	n := startServe(t, dir, []string{"SVC_LOG_LEVEL=debug"})
	line := n.wait(t, regexp.MustCompile(`"msg":"svcd serving"`))
	var b map[string]any
	if err := json.Unmarshal([]byte(line), &b); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"health", "cluster", "setup"} {
		u, _ := b[k].(string)
		if !strings.HasPrefix(u, "http://127.0.0.1:") {
			t.Fatalf("banner link %s = %q", k, u)
		}
		getOK(t, u)
	}
	if v, _ := b["version"].(string); !strings.HasPrefix(v, testVersion) {
		t.Errorf("banner version %q", v)
	}
	if fa, _ := b["first_admin"].(string); !strings.Contains(fa, "svcd admin create --dir "+dir) {
		t.Errorf("banner's first-admin hint %q does not name --dir %s", fa, dir)
	}
	lines := n.stop(t)
	id, err := os.ReadFile(filepath.Join(dir, "node-id"))
	if err != nil {
		t.Fatal(err)
	}
	node := strings.TrimSpace(string(id))
	banners, raft := 0, 0
	for _, l := range lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Errorf("not a JSON record: %q", l)
			continue
		}
		if rec["node"] != node {
			t.Errorf("record without node %s: %s", node, l)
		}
		if rec["level"] == "ERROR" {
			t.Errorf("an error: %s", l)
		}
		if rec["msg"] == "svcd serving" {
			banners++
		}
		if rec["module"] == "raft" {
			raft++
		}
	}
	if banners != 1 || raft == 0 {
		t.Errorf("%d banners (want 1), %d raft records at debug (want some)", banners, raft)
	}
}

// TestServeLogText: --log-format text writes key=value lines naming the
// node, and the banner as a block of lines, once, whose links answer.
func TestServeLogText(t *testing.T) {
	dir := t.TempDir()
	n := startServe(t, dir, []string{"SVC_LOG_FORMAT=json"}, "--log-format", "text")
	n.wait(t, regexp.MustCompile(`^  setup: +http://`))
	links := 0
	for _, l := range n.output() {
		if m := regexp.MustCompile(`^  (health|cluster|setup): +(http://\S+)$`).FindStringSubmatch(l); m != nil {
			getOK(t, m[2])
			links++
		}
	}
	if links != 3 {
		t.Errorf("%d links in the banner, want 3", links)
	}
	lines := n.stop(t)
	id, _ := os.ReadFile(filepath.Join(dir, "node-id"))
	record := regexp.MustCompile(`^time=\S+ level=(DEBUG|INFO|WARN) msg=.* node=` + regexp.QuoteMeta(strings.TrimSpace(string(id))) + `( |$)`)
	banners, records := 0, 0
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "time="):
			records++
			if !record.MatchString(l) {
				t.Errorf("not a text record of this node, or an error: %q", l)
			}
		case strings.HasPrefix(l, "{"):
			t.Errorf("a JSON line with --log-format text: %q", l)
		case strings.HasPrefix(l, "svcd ") && strings.Contains(l, " serving at http://127.0.0.1:"):
			banners++
		}
	}
	if banners != 1 || records == 0 {
		t.Errorf("%d banners (want 1), %d records:\n%s", banners, records, strings.Join(lines, "\n"))
	}
}

// TestServeLogFolder: svcd serve tees its lines into the data directory's
// log folder (<dir>/logs/YYYY-MM-DD.jsonl, UTC) as JSON whatever stderr's
// format, next to one request line per request; stderr keeps its text.
func TestServeLogFolder(t *testing.T) {
	dir := t.TempDir()
	n := startServe(t, dir, nil, "--log-format", "text")
	m := regexp.MustCompile(`^  health: +(http://\S+)$`)
	health := m.FindStringSubmatch(n.wait(t, m))[1]
	getOK(t, health)
	lines := n.stop(t)
	for _, l := range lines {
		if strings.HasPrefix(l, "{") {
			t.Errorf("a JSON line on stderr in text format: %s", l)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "logs", time.Now().UTC().Format("2006-01-02")+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var app, req bool
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Errorf("not a JSON line in the log folder: %q", l)
			continue
		}
		if rec["kind"] == "app" && rec["msg"] == "stopped cleanly" && rec["node"] != "" {
			app = true
		}
		if rec["kind"] == "request" && rec["route"] == "/_/health" && rec["status"] == float64(200) {
			req = true
		}
	}
	if !app || !req {
		t.Errorf("the log folder lacks the stop line (%v) or the health request (%v):\n%s", app, req, b)
	}
}
