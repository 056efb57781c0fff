package jepsen_test

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"svcd/jepsen/harness"
)

// TestProgressOfLongWork runs the long work of a real node and of the
// repair commands and reads what they report (docs/operations.md,
// "Progress of long work"): a CSV import and a snapshot log their summary
// in the node's log; svcd repair verify shows plain progress lines on an
// ordinary standard error and a bar redrawn in place on a terminal; the
// restore of the snapshot at the start after svcd repair rebuild-db logs
// its summary too.
func TestProgressOfLongWork(t *testing.T) {
	skipShort(t)
	dir := t.TempDir()
	node := &harness.Node{Name: "solo"}
	// Few trailing entries: the snapshot compacts the log, so the start
	// after rebuild-db restores the snapshot instead of replaying the log.
	node.Start(t, dir, "SVC_RAFT_TRAILING_LOGS=32")
	waitReady(t, node)
	admin := node.Client().WithToken(node.Setup(t))
	mustDo(t, admin, "POST", "/api/v1/admin/collections", []byte(`{"name":"bulk","type":"base","fields":[{"name":"title","type":"text"}]}`), http.StatusCreated)
	var csv bytes.Buffer
	csv.WriteString("title\n")
	filler := strings.Repeat("x", 200)
	for i := range 20_000 {
		fmt.Fprintf(&csv, "row%05d %s\n", i, filler)
	}
	admin.Timeout = time.Minute
	mustDo(t, admin, "POST", "/api/v1/admin/import/bulk", csv.Bytes(), http.StatusOK)
	mustDo(t, admin, "POST", "/api/v1/admin/cluster/snapshot", nil, http.StatusOK)
	if err := node.Stop(); err != nil {
		t.Fatal(err)
	}
	nodeLog := readNodeLog(t, dir)
	for _, want := range []string{"csv import done", "snapshot done"} {
		if !strings.Contains(nodeLog, want) {
			t.Errorf("the node's log has no %q line", want)
		}
	}

	verify := func() *exec.Cmd {
		cmd := exec.Command(node.Bin, "repair", "verify", "--dir", dir)
		cmd.Env = append(os.Environ(), "SVC_PROGRESS_INTERVAL=100us")
		return cmd
	}
	t.Run("lines", func(t *testing.T) {
		cmd := verify()
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("svcd repair verify: %v\n%s%s", err, stdout.String(), stderr.String())
		}
		if !strings.Contains(stdout.String(), "everything checked is intact") {
			t.Errorf("verify's output:\n%s", stdout.String())
		}
		out := stderr.String()
		t.Logf("standard error (%d lines), first lines:\n%s", strings.Count(out, "\n"), firstLines(out, 12))
		if strings.Contains(out, "\r") {
			t.Errorf("a bar was drawn on standard error that is no terminal")
		}
		for _, re := range []string{
			`(?m)^checking the Raft log \((structure|entries|snapshot)\): .* of .* \(\d+\.\d%\), .* elapsed`,
			`(?m)^checking the Raft log done: .* in `,
			`(?m)^checking the newest snapshot: .* of .* \(\d+\.\d%\), .*/s, .* elapsed, .* left$`,
			`(?m)^checking the newest snapshot done: `,
			`(?m)^checking the database: .* elapsed$`,
		} {
			if !regexp.MustCompile(re).MatchString(out) {
				t.Errorf("standard error has no line matching %s", re)
			}
		}
	})
	t.Run("terminal", func(t *testing.T) {
		out := runOnTerminal(t, verify())
		if !strings.Contains(out, "everything checked is intact") {
			t.Errorf("verify's output on a terminal:\n%q", out)
		}
		bar := regexp.MustCompile(`\rchecking the (Raft log|newest snapshot)( \(\w+\))? \[=*>? *\] +\d+\.\d%  .* of .*\x1b\[K`)
		done := regexp.MustCompile(`\rchecking the (Raft log|newest snapshot) done: .*\x1b\[K\r?\n`)
		if !bar.MatchString(out) || !done.MatchString(out) {
			t.Errorf("no bar redrawn in place, then replaced by its summary:\n%q", out)
		}
	})

	repair(t, node, true, "rebuild-db")
	node.Restart(t)
	waitReady(t, node)
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(readNodeLog(t, dir), "database restore done") {
		if time.Now().After(deadline) {
			t.Fatal("the restart after rebuild-db logged no \"database restore done\" line")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func readNodeLog(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, harness.LogName))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func firstLines(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	return strings.Join(lines[:min(n, len(lines))], "")
}
