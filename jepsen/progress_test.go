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
	for i := range 30_000 {
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
		checkProgressLines(t, out)
	})
	t.Run("terminal", func(t *testing.T) {
		out := runOnTerminal(t, verify())
		if !strings.Contains(out, "everything checked is intact") {
			t.Errorf("verify's output on a terminal:\n%q", out)
		}
		// A bar with a total, redrawn in place, then its summary on the
		// same line, ended.
		bar := regexp.MustCompile(`\r(checking the (?:Raft log|newest snapshot))(?: \(\w+\))? \[=*>? *\] +\d+\.\d%  .* of .*\x1b\[K`)
		m := bar.FindStringSubmatch(out)
		if m == nil || !strings.Contains(out, "\r"+m[1]+" done: ") {
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

// The plain lines of svcd repair verify's checks on standard error: a
// progress line names its step (and phase), and may count, with a total
// and a percent, then says the time elapsed and, with a total, left; a
// summary names the step, what it counted, the time and the rate.
var (
	progressLine = regexp.MustCompile(`^(checking the (?:Raft log|newest snapshot|database))(?: \((?:structure|entries|snapshot)\))?: ` +
		`(?:(.+?)(?: \((\d+\.\d)%\))?, (?:.+/s, )?)?[\d.]+[µm]?s elapsed(?:, [\dhms.µ]+ left)?$`)
	summaryLine = regexp.MustCompile(`^(checking the (?:Raft log|newest snapshot|database)) done(?:: .+)? in [\dhms.µ]+(?: \(.+/s\))?$`)
)

// checkProgressLines checks every line of out: progress lines of a step,
// then its summary; and that at least one step reported a percent.
func checkProgressLines(t *testing.T, out string) {
	t.Helper()
	if strings.Contains(out, "\r") {
		t.Errorf("a bar was drawn on standard error that is no terminal")
	}
	open, percents, summaries := "", 0, 0
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if m := progressLine.FindStringSubmatch(line); m != nil {
			if open != "" && open != m[1] {
				t.Errorf("%q: progress of a new step before the summary of %q", line, open)
			}
			open = m[1]
			if m[3] != "" {
				percents++
			}
			continue
		}
		if m := summaryLine.FindStringSubmatch(line); m != nil {
			if m[1] != open {
				t.Errorf("%q: a summary without progress lines before it (a step shorter than the interval prints none)", line)
			}
			open = ""
			summaries++
			continue
		}
		t.Errorf("unexpected line on standard error: %q", line)
	}
	if open != "" {
		t.Errorf("%q has no summary", open)
	}
	if percents == 0 || summaries == 0 {
		t.Errorf("%d progress lines with a percent, %d summaries; want some of both", percents, summaries)
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
