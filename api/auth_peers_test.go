package api_test

import (
	"net/http"
	"os/exec"
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

// oathCode returns the TOTP code of secret at time at, from oathtool.
func oathCode(t testing.TB, secret string, at time.Time) string {
	t.Helper()
	bin, err := exec.LookPath("oathtool")
	if err != nil {
		apitest.NeedPeer(t, "oathtool", "apt-get install -y oathtool")
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

// maildev is one running catcher (no SMTP auth).
type maildev struct{ *apitest.Maildev }

// startMaildev runs maildev for the test's lifetime.
func startMaildev(t testing.TB) *maildev { return &maildev{apitest.StartMaildev(t, "", "")} }

// configure points the node's SMTP settings at the catcher.
func (m *maildev) configure(t testing.TB, s *apitest.Server) {
	t.Helper()
	s.MustAdmin(t, http.StatusOK, http.MethodPatch, settingsURL, map[string]any{
		"smtp.enabled": "1", "smtp.host": "127.0.0.1", "smtp.port": strconv.Itoa(m.SMTPPort),
		"smtp.secure": "none", "smtp.from": "Acme <no-reply@acme.test>", "app.url": "https://app.acme.test",
	})
}

// message is one received email.
type message = apitest.Email

// messages lists what the catcher holds for addr.
func (m *maildev) messages(t testing.TB, addr string) []message {
	t.Helper()
	var out []message
	for _, msg := range m.Emails(t) {
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
