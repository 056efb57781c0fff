package apitest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// NeedPeer skips a test whose real peer (an SMTP catcher, oathtool) is not
// installed, unless CI is set (.ci/run installs every peer and sets CI=1),
// where a missing peer fails it.
func NeedPeer(t testing.TB, what, how string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("%s not found (CI is set, so this peer is required): %s", what, how)
	}
	t.Skipf("%s not installed (set CI=1 to make this a failure): %s", what, how)
}

// Maildev is a running SMTP catcher process (npm maildev@2): SMTP on
// SMTPPort, the HTTP API (GET /email) at Web.
type Maildev struct {
	SMTPPort int
	Web      string
}

// Email is the part of maildev's GET /email answer tests read.
type Email struct {
	Subject string
	Text    string
	HTML    string
	From    []struct{ Address, Name string }
	To      []struct{ Address, Name string }
	Headers map[string]any
}

// StartMaildev runs maildev ($MAILDEV_BIN, the executable or the
// node_modules/.bin directory holding it, else maildev on PATH) on free
// loopback ports for the test's lifetime; user and pass, when set, are
// required of SMTP clients.
func StartMaildev(t testing.TB, user, pass string) *Maildev {
	t.Helper()
	bin := os.Getenv("MAILDEV_BIN")
	if fi, err := os.Stat(bin); bin != "" && err == nil && fi.IsDir() {
		bin = filepath.Join(bin, "maildev")
	}
	if _, err := os.Stat(bin); bin == "" || err != nil {
		p, err := exec.LookPath("maildev")
		if err != nil {
			NeedPeer(t, "maildev", "npm install --prefix DIR maildev@2, then MAILDEV_BIN=DIR/node_modules/.bin")
		}
		bin = p
	}
	ports := freePorts(t, 2)
	args := []string{"--smtp", strconv.Itoa(ports[0]), "--web", strconv.Itoa(ports[1]), "--ip", "127.0.0.1", "--web-ip", "127.0.0.1"}
	if user != "" {
		args = append(args, "--incoming-user", user, "--incoming-pass", pass)
	}
	var out bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("maildev output:\n%s", out.String())
		}
	})
	m := &Maildev{SMTPPort: ports[0], Web: fmt.Sprintf("http://127.0.0.1:%d", ports[1])}
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("maildev exited: %v\n%s", err, out.String())
		default:
		}
		if resp, err := http.Get(m.Web + "/email"); err == nil {
			_ = resp.Body.Close()
			c, cerr := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", m.SMTPPort), time.Second)
			if resp.StatusCode == http.StatusOK && cerr == nil {
				_ = c.Close()
				return m
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("maildev not ready after 30 s\n%s", out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Emails lists every message the catcher holds.
func (m *Maildev) Emails(t testing.TB) []Email {
	t.Helper()
	resp, err := http.Get(m.Web + "/email")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var all []Email
	if err := json.NewDecoder(resp.Body).Decode(&all); err != nil {
		t.Fatalf("maildev GET /email: %v", err)
	}
	return all
}

// freePorts returns n distinct loopback ports free a moment ago.
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	var ports []int
	var lns []net.Listener
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	for _, ln := range lns {
		_ = ln.Close()
	}
	return ports
}
