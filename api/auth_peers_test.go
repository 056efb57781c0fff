package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"svcd/api/apitest"
)

// Peers of the auth flow tests: a real SMTP catcher (npm maildev@2) and
// oathtool for TOTP codes computed independently of the server. Without
// them the tests skip, unless CI is set (.ci/run installs both), where a
// missing peer fails.

func needPeer(t testing.TB, what, how string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("%s not found (CI is set, so this peer is required): %s", what, how)
	}
	t.Skipf("%s not installed (set CI=1 to make this a failure): %s", what, how)
}

// oathCode returns the TOTP code of secret at time at, from oathtool.
func oathCode(t testing.TB, secret string, at time.Time) string {
	t.Helper()
	bin, err := exec.LookPath("oathtool")
	if err != nil {
		needPeer(t, "oathtool", "apt-get install -y oathtool")
	}
	out, err := exec.Command(bin, "--totp=sha1", "--digits=6", "--time-step-size=30s", "--base32",
		"--now", at.UTC().Format("2006-01-02 15:04:05 UTC"), secret).CombinedOutput()
	if err != nil {
		t.Fatalf("oathtool: %v\n%s", err, out)
	}
	code := strings.TrimSpace(string(out))
	if len(code) != 6 {
		t.Fatalf("oathtool printed %q", out)
	}
	return code
}

// maildev is one running catcher: its SMTP port and web API.
type maildev struct {
	smtpPort int
	web      string
}

// startMaildev runs maildev on free loopback ports (no SMTP auth) for the
// test's lifetime.
func startMaildev(t testing.TB) *maildev {
	t.Helper()
	bin := os.Getenv("MAILDEV_BIN")
	if fi, err := os.Stat(bin); bin != "" && err == nil && fi.IsDir() {
		bin = filepath.Join(bin, "maildev")
	}
	if _, err := os.Stat(bin); bin == "" || err != nil {
		p, err := exec.LookPath("maildev")
		if err != nil {
			needPeer(t, "maildev", "npm install --prefix DIR maildev@2, then MAILDEV_BIN=DIR/node_modules/.bin")
		}
		bin = p
	}
	var ports []int
	var lns []net.Listener
	for range 2 {
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
	var out bytes.Buffer
	cmd := exec.Command(bin, "--smtp", strconv.Itoa(ports[0]), "--web", strconv.Itoa(ports[1]),
		"--ip", "127.0.0.1", "--web-ip", "127.0.0.1")
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
	m := &maildev{smtpPort: ports[0], web: fmt.Sprintf("http://127.0.0.1:%d", ports[1])}
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("maildev exited: %v\n%s", err, out.String())
		default:
		}
		if resp, err := http.Get(m.web + "/email"); err == nil {
			_ = resp.Body.Close()
			c, cerr := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", m.smtpPort), time.Second)
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

// configure points the node's SMTP settings at the catcher.
func (m *maildev) configure(t testing.TB, s *apitest.Server) {
	t.Helper()
	s.MustAdmin(t, http.StatusOK, http.MethodPatch, settingsURL, map[string]any{
		"smtp.enabled": "1", "smtp.host": "127.0.0.1", "smtp.port": strconv.Itoa(m.smtpPort),
		"smtp.secure": "none", "smtp.from": "Acme <no-reply@acme.test>", "app.url": "https://app.acme.test",
	})
}

// message is the part of maildev's GET /email answer the tests read.
type message struct {
	Subject string
	Text    string
	To      []struct{ Address string }
}

// messages lists what the catcher holds for addr.
func (m *maildev) messages(t testing.TB, addr string) []message {
	t.Helper()
	resp, err := http.Get(m.web + "/email")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var all []message
	if err := json.NewDecoder(resp.Body).Decode(&all); err != nil {
		t.Fatalf("maildev GET /email: %v", err)
	}
	var out []message
	for _, msg := range all {
		for _, to := range msg.To {
			if strings.EqualFold(to.Address, addr) {
				out = append(out, msg)
			}
		}
	}
	return out
}

// await waits for the n-th message (1-based) to addr and returns it.
func (m *maildev) await(t testing.TB, addr string, n int) message {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if got := m.messages(t, addr); len(got) >= n {
			return got[n-1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no message %d for %s after 20 s", n, addr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

var (
	linkToken = regexp.MustCompile(`[?&]token=([A-Za-z0-9_.\-]+)`)
	otpCode   = regexp.MustCompile(`(?m)^\s+(\d{6})\s*$`)
)

// tokenIn reads the link token of a message's text part.
func tokenIn(t testing.TB, msg message) string {
	t.Helper()
	m := linkToken.FindStringSubmatch(msg.Text)
	if m == nil {
		t.Fatalf("no link token in %q", msg.Text)
	}
	return m[1]
}

// codeIn reads the 6-digit code of an OTP message.
func codeIn(t testing.TB, msg message) string {
	t.Helper()
	m := otpCode.FindStringSubmatch(msg.Text)
	if m == nil {
		t.Fatalf("no code in %q", msg.Text)
	}
	return m[1]
}
