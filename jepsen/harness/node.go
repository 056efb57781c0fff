package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
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

// LogName is the file in a node's data directory that collects the
// process's stdout and stderr, across restarts.
const LogName = "svcd.log"

// StopTimeout bounds how long Stop waits for a SIGTERMed node to exit
// (svcd drains for up to 10 s) before it kills it.
const StopTimeout = 15 * time.Second

// logTail is how much of a node's log a failed test prints.
const logTail = 64 << 10

// Node is one svcd process. Configure the exported fields before the first
// Start; the data directory, environment and HTTP port are kept across
// restarts, so URL stays valid for the node's whole life.
type Node struct {
	// Name labels the node in test logs ("n1"); empty means "svcd".
	Name string
	// Bin is the svcd binary; empty means BuildBinary.
	Bin string
	// Args are extra `svcd serve` flags (cluster flags, for example).
	Args []string
	// Addr is the HTTP listen address, 127.0.0.1:<port>; empty means a free
	// port picked at the first Start. It is kept across restarts.
	Addr string
	// Netns, when set, runs the process in that network namespace (`ip
	// netns exec`); Addr is then an address of the namespace.
	Netns string

	mu      sync.Mutex
	dataDir string
	env     []string
	addr    string // 127.0.0.1:port, fixed at the first Start
	cleanup bool   // t.Cleanup registered
	starts  int
	proc    *proc
}

// proc is one run of the binary.
type proc struct {
	cmd  *exec.Cmd
	log  *os.File
	done chan struct{} // closed once the process has exited
	err  error         // cmd.Wait's result, valid after done
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Start launches `svcd serve --http 127.0.0.1:<free port>` with
// SVC_DATA_DIR=dataDir and env (KEY=VALUE) added to the environment (any
// SVC_* variable of the test's own environment is dropped). It does not
// wait for readiness: call WaitReady. The process is killed when t ends,
// and its log printed if t failed.
func (n *Node) Start(t testing.TB, dataDir string, env ...string) {
	t.Helper()
	abs, err := filepath.Abs(dataDir)
	if err != nil {
		t.Fatalf("%s: data dir: %v", n.name(), err)
	}
	n.mu.Lock()
	n.dataDir, n.env = abs, append([]string(nil), env...)
	n.mu.Unlock()
	n.launch(t)
}

// Restart starts the node again, after Kill or Stop, with the same data
// directory, environment and port.
func (n *Node) Restart(t testing.TB) {
	t.Helper()
	n.mu.Lock()
	configured := n.dataDir != ""
	n.mu.Unlock()
	if !configured {
		t.Fatalf("%s: Restart before Start", n.name())
	}
	n.launch(t)
}

func (n *Node) launch(t testing.TB) {
	t.Helper()
	if n.Bin == "" {
		n.Bin = BuildBinary(t)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.proc != nil && !n.proc.exited() {
		t.Fatalf("%s: already running (pid %d)", n.name(), n.proc.cmd.Process.Pid)
	}
	if n.addr == "" && n.Addr != "" {
		n.addr = n.Addr
	}
	if n.addr == "" {
		port, err := FreePort()
		if err != nil {
			t.Fatalf("%s: free port: %v", n.name(), err)
		}
		n.addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	}
	if err := os.MkdirAll(n.dataDir, 0o700); err != nil {
		t.Fatalf("%s: %v", n.name(), err)
	}
	logf, err := os.OpenFile(filepath.Join(n.dataDir, LogName), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatalf("%s: log file: %v", n.name(), err)
	}
	n.starts++
	args := append([]string{"serve", "--http", n.addr}, n.Args...)
	fmt.Fprintf(logf, "\n=== harness: start #%d at %s: svcd %s\n", n.starts, time.Now().Format(time.RFC3339Nano), strings.Join(args, " "))
	cmd := exec.Command(n.Bin, args...)
	if n.Netns != "" {
		// ip execs the binary after entering the namespace: same pid.
		cmd = exec.Command("ip", append([]string{"netns", "exec", n.Netns, n.Bin}, args...)...)
	}
	// The rate limiter keys anonymous clients by address, and every test
	// client shares one: tests that want it pass SVC_RATE_ENABLED=1.
	cmd.Env = append(cleanEnv(), "SVC_DATA_DIR="+n.dataDir, "SVC_RATE_ENABLED=0")
	cmd.Env = append(cmd.Env, n.env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		logf.Close()
		t.Fatalf("%s: start: %v", n.name(), err)
	}
	p := &proc{cmd: cmd, log: logf, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		p.log.Close()
		close(p.done)
	}()
	n.proc = p
	if !n.cleanup {
		n.cleanup = true
		t.Cleanup(func() {
			n.Kill()
			if t.Failed() {
				n.dumpLog(t)
			}
		})
	}
	t.Logf("%s: started pid %d on %s (start #%d)", n.name(), cmd.Process.Pid, n.addr, n.starts)
}

// cleanEnv is the test's environment without SVC_* variables, so a
// developer's own settings cannot leak into a test node.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SVC_") {
			env = append(env, kv)
		}
	}
	return env
}

func (n *Node) name() string {
	if n.Name == "" {
		return "svcd"
	}
	return n.Name
}

func (n *Node) current() *proc {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.proc
}

// Kill sends SIGKILL and waits for the process to exit. Killing a node
// that is not running is a no-op.
func (n *Node) Kill() error {
	p := n.current()
	if p == nil || p.exited() {
		return nil
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("%s: kill: %w", n.name(), err)
	}
	<-p.done
	return nil
}

// Stop sends SIGTERM and waits up to StopTimeout for a clean exit. It
// returns an error (after SIGKILLing the process) on timeout, and when the
// process exits with a non-zero status.
func (n *Node) Stop() error {
	p := n.current()
	if p == nil || p.exited() {
		return nil
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("%s: SIGTERM: %w", n.name(), err)
	}
	select {
	case <-p.done:
		if p.err != nil {
			return fmt.Errorf("%s: exited after SIGTERM: %w", n.name(), p.err)
		}
		return nil
	case <-time.After(StopTimeout):
		n.Kill()
		return fmt.Errorf("%s: did not stop within %s after SIGTERM; killed", n.name(), StopTimeout)
	}
}

// Pause stops the process with SIGSTOP (it keeps its sockets, as a
// process stalled by a long GC pause or a frozen VM does).
func (n *Node) Pause() error { return n.signal(syscall.SIGSTOP) }

// Resume continues a paused process with SIGCONT.
func (n *Node) Resume() error { return n.signal(syscall.SIGCONT) }

func (n *Node) signal(sig syscall.Signal) error {
	p := n.current()
	if p == nil || p.exited() {
		return fmt.Errorf("%s: not running", n.name())
	}
	if err := p.cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("%s: %v: %w", n.name(), sig, err)
	}
	return nil
}

// Running reports whether the process is alive.
func (n *Node) Running() bool {
	p := n.current()
	return p != nil && !p.exited()
}

// ExitErr is the current process's exit error once it has exited (nil for
// a clean exit or while running).
func (n *Node) ExitErr() error {
	p := n.current()
	if p == nil || !p.exited() {
		return nil
	}
	return p.err
}

// PID is the current process id (0 before Start).
func (n *Node) PID() int {
	p := n.current()
	if p == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// URL is the node's base URL, http://<Addr>.
func (n *Node) URL() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return "http://" + n.addr
}

// DataDir is the node's data directory.
func (n *Node) DataDir() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.dataDir
}

// Client returns a client for this node with DefaultTimeout per request.
func (n *Node) Client() *Client { return NewClient(n.URL()) }

// WaitReady polls GET /_/ready until it answers 200. It fails early when
// the process exits, and with the last answer seen when ctx ends.
func (n *Node) WaitReady(ctx context.Context) error {
	p := n.current()
	if p == nil {
		return fmt.Errorf("%s: not started", n.name())
	}
	c := n.Client()
	c.Timeout = time.Second
	last := "no answer"
	for {
		if p.exited() {
			return fmt.Errorf("%s: process exited before ready: %v", n.name(), p.err)
		}
		resp, err := c.Do(ctx, "GET", "/_/ready", nil)
		switch {
		case err != nil:
			last = err.Error()
		case resp.Status == 200:
			return nil
		default:
			last = resp.String()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: not ready: %w (last: %s)", n.name(), ctx.Err(), last)
		case <-p.done:
		case <-time.After(25 * time.Millisecond):
		}
	}
}

// Setup creates the first admin (or logs in as it when one exists) and
// returns its bearer token.
func (n *Node) Setup(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tok, err := SetupAdmin(ctx, n.Client())
	if err != nil {
		t.Fatalf("%s: %v", n.name(), err)
	}
	return tok
}

// LogPath is the file collecting the node's stdout and stderr.
func (n *Node) LogPath() string { return filepath.Join(n.DataDir(), LogName) }

// ReadLog returns the node's whole log, across restarts.
func (n *Node) ReadLog() ([]byte, error) { return os.ReadFile(n.LogPath()) }

// dumpLog prints the tail of the node's log into the test output.
func (n *Node) dumpLog(t testing.TB) {
	path := filepath.Join(n.DataDir(), LogName)
	f, err := os.Open(path)
	if err != nil {
		t.Logf("%s: no log: %v", n.name(), err)
		return
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > logTail {
		f.Seek(st.Size()-logTail, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	t.Logf("%s: log %s (last %d bytes):\n%s", n.name(), path, len(b), b)
}
