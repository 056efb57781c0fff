package docs

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// This file runs a doc's segments in one bash session, in file order, so
// that a variable set in one block is there in the next, and checks each
// segment as it finishes.

// prelude is sourced once at the start of every session. curl is wrapped
// so that the HTTP status of each call is recorded whatever flags the
// example uses: -v writes the response's status line to stderr, which
// the wrapper files away (curl's own messages still reach stderr), with
// the time the call started, so that "the last call" is the last one
// started even when a stream in the background ends after it. A
// stream read with --max-time that ends on its time limit (exit 28) is a
// success: that is how an example shows the start of a stream.
const prelude = `set -u -o pipefail
curl() {
  local err rc st maxtime=0 a t0=${EPOCHREALTIME/[.,]/}
  err=$(mktemp "$DOCTEST_TMP/curl.XXXXXX")
  for a in "$@"; do case "$a" in -m|--max-time|--max-time=*) maxtime=1;; esac; done
  command curl -v "$@" 2>"$err"
  rc=$?
  st=$(sed -n 's/^< HTTP\/[0-9.]* \([0-9][0-9][0-9]\).*/\1/p' "$err" | tail -n 1)
  echo "$t0 ${st:-000}" >>"$DOCTEST_STATUS"
  grep -v '^[*<>{}] ' "$err" >&2
  rm -f "$err"
  if [ "$rc" = 28 ] && [ "$maxtime" = 1 ]; then rc=0; fi
  return $rc
}
`

// segmentTimeout bounds one segment's run.
const segmentTimeout = 60 * time.Second

// A failure is one check that did not hold, at a line of a doc.
type failure struct {
	path string
	line int
	msg  string
}

func (f failure) String() string { return fmt.Sprintf("%s:%d: %s", f.path, f.line, f.msg) }

// session is one bash process that runs a doc's segments.
type session struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *bufio.Reader
	tmp    string // DOCTEST_TMP: segment scripts, outputs, statuses
	status string // the file curl appends statuses to
	n      int    // segments run
}

// startSession starts bash in dir (the examples' working directory) with
// env (plus DOCTEST_TMP and DOCTEST_STATUS) and sources the prelude.
func startSession(dir, tmp string, env []string) (*session, error) {
	s := &session{tmp: tmp, status: filepath.Join(tmp, "status")}
	s.cmd = exec.Command("bash", "--noprofile", "--norc")
	s.cmd.Dir = dir
	s.cmd.Env = append(env, "DOCTEST_TMP="+tmp, "DOCTEST_STATUS="+s.status)
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var err error
	if s.stdin, err = s.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	s.out = bufio.NewReader(stdout)
	s.cmd.Stderr = io.Discard
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(tmp, "prelude.sh"), []byte(prelude), 0o644); err != nil {
		return nil, err
	}
	if _, _, _, err := s.run("source \"$DOCTEST_TMP/prelude.sh\""); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// run sources script in the session and returns what it printed to
// stdout and stderr and its exit status. The statuses of its curl calls
// are in s.statuses() until the next run.
func (s *session) run(script string) (stdout, stderr string, rc int, err error) {
	s.n++
	base := filepath.Join(s.tmp, "seg"+strconv.Itoa(s.n))
	if err := os.WriteFile(base+".sh", []byte(script+"\n"), 0o644); err != nil {
		return "", "", 0, err
	}
	if err := os.WriteFile(s.status, nil, 0o644); err != nil {
		return "", "", 0, err
	}
	sentinel := "__doctest_done_" + strconv.Itoa(s.n)
	fmt.Fprintf(s.stdin, "source %q </dev/null >%q 2>%q; echo %s $?\n", base+".sh", base+".out", base+".err", sentinel)
	type res struct {
		rc  int
		err error
	}
	done := make(chan res, 1)
	go func() {
		for {
			line, err := s.out.ReadString('\n')
			if f := strings.Fields(line); len(f) == 2 && f[0] == sentinel {
				n, _ := strconv.Atoi(f[1])
				done <- res{rc: n}
				return
			}
			if err != nil {
				done <- res{err: fmt.Errorf("the shell ended (an `exit`, or `set -u` meeting an unset variable)")}
				return
			}
		}
	}()
	var r res
	select {
	case r = <-done:
	case <-time.After(segmentTimeout):
		s.close()
		r = res{err: fmt.Errorf("still running after %v", segmentTimeout)}
	}
	o, _ := os.ReadFile(base + ".out")
	e, _ := os.ReadFile(base + ".err")
	return string(o), string(e), r.rc, r.err
}

// statuses returns the HTTP status of every curl call of the last run,
// in the order the calls started (0: no answer).
func (s *session) statuses() []int {
	b, _ := os.ReadFile(s.status)
	type call struct{ start, status int64 }
	var calls []call
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		t, _ := strconv.ParseInt(f[0], 10, 64)
		n, _ := strconv.ParseInt(f[1], 10, 64)
		calls = append(calls, call{t, n})
	}
	sort.SliceStable(calls, func(i, j int) bool { return calls[i].start < calls[j].start })
	st := make([]int, len(calls))
	for i, c := range calls {
		st[i] = int(c.status)
	}
	return st
}

// close ends the shell and everything it started.
func (s *session) close() {
	if s.cmd.Process == nil {
		return
	}
	s.stdin.Close()
	syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	s.cmd.Wait()
}

// runDoc runs every block of d that is not skipped and returns what
// failed. subst rewrites each script before it runs (the node addresses).
func runDoc(d *doc, s *session, subst func(string) string) []failure {
	var fails []failure
	fail := func(line int, format string, args ...any) {
		fails = append(fails, failure{d.path, line, fmt.Sprintf(format, args...)})
	}
	for _, b := range d.blocks {
		if b.skip != "" {
			continue
		}
		for _, seg := range b.segments {
			if strings.TrimSpace(seg.script) == "" {
				continue
			}
			out, errOut, rc, err := s.run(subst(seg.script))
			ctx := func() string { return context(seg, out, errOut) }
			if err != nil {
				fail(seg.first, "%v%s", err, ctx())
				return fails // the session is gone
			}
			if rc != 0 {
				fail(seg.first, "the command exited with status %d%s", rc, ctx())
				continue
			}
			st := s.statuses()
			if len(seg.expects) == 0 {
				for i, code := range st {
					if code < 200 || code >= 400 {
						fail(seg.first, "curl call %d answered %s, and no `# =>` line says that is expected%s", i+1, statusText(code), ctx())
						break
					}
				}
				continue
			}
			for _, e := range seg.expects {
				if e.status == 0 {
					continue
				}
				if len(st) == 0 {
					fail(e.line, "`# => %d` but the command made no HTTP call%s", e.status, ctx())
				} else if got := st[len(st)-1]; got != e.status {
					fail(e.line, "want HTTP status %d, got %s%s", e.status, statusText(got), ctx())
				}
			}
			if bad, why := matchOutput(out, seg.expects); bad != nil {
				fail(bad.line, "%s\n  expected: %s%s", why, bad, ctx())
			}
		}
	}
	return fails
}

func statusText(code int) string {
	if code == 0 {
		return "no answer (connection failed)"
	}
	return strconv.Itoa(code)
}

// context renders a failed segment's commands and output for a message.
func context(seg segment, out, errOut string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n  command (lines %d-%d):\n%s", seg.first, seg.last, indent(seg.script))
	fmt.Fprintf(&b, "\n  output:\n%s", indent(clip(out)))
	if strings.TrimSpace(errOut) != "" {
		fmt.Fprintf(&b, "\n  stderr:\n%s", indent(clip(errOut)))
	}
	return b.String()
}

func indent(s string) string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return "    (nothing)"
	}
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}

func clip(s string) string {
	if len(s) > 3000 {
		return s[:3000] + "\n[... cut]"
	}
	return s
}
