package jepsen_test

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"svcd/jepsen/harness"
)

// oathNow computes a TOTP code of secret at time at with oathtool.
func oathNow(t *testing.T, secret string, at time.Time) string {
	t.Helper()
	bin, err := exec.LookPath("oathtool")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("oathtool not found (CI is set, so this peer is required)")
		}
		t.Skip("oathtool not installed (set CI=1 to make this a failure)")
	}
	out, err := exec.Command(bin, "--totp=sha1", "--digits=6", "--time-step-size=30s", "--base32",
		"--now", at.UTC().Format("2006-01-02 15:04:05 UTC"), secret).CombinedOutput()
	if err != nil {
		t.Fatalf("oathtool: %v\n%s", err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestMFATicketAcrossNodes: an MFA ticket's attempts and its single use
// are the cluster's, not a node's. Five wrong codes sent to three
// different nodes burn the ticket everywhere; a ticket exchanged on one
// node cannot be exchanged again on another.
func TestMFATicketAcrossNodes(t *testing.T) {
	c := startCluster(t, 3)
	createCollectionAll(t, c, authUsers)
	nodes := c.Nodes()
	n1, n2, n3 := c.Client(nodes[0]), c.Client(nodes[1]), c.Client(nodes[2])
	ctx := context.Background()
	creds := map[string]any{"email": "m@example.com", "password": "a-long-password-1"}

	reg := mustDo(t, n1, "POST", "/api/v1/auth/users/register", creds, http.StatusCreated)
	var sess struct{ Data struct{ Token string } }
	mustDo(t, n1.MinIndex(reg.Index()), "POST", "/api/v1/auth/users/login", creds, http.StatusOK).JSON(&sess)
	user := n1.WithToken(sess.Data.Token)
	var setup struct{ Data struct{ Secret string } }
	mustDo(t, user, "POST", "/api/v1/auth/users/totp/setup", nil, http.StatusOK).JSON(&setup)
	conf := mustDo(t, user, "POST", "/api/v1/auth/users/totp/confirm", map[string]any{"code": oathNow(t, setup.Data.Secret, time.Now())}, http.StatusOK)
	var on struct {
		Data struct {
			RecoveryCodes []string `json:"recovery_codes"`
		}
	}
	conf.JSON(&on)
	if len(on.Data.RecoveryCodes) != 10 {
		t.Fatalf("confirm: %s", conf)
	}

	// A sign-in on n2 (which has applied the confirm) answers a ticket.
	var s2 struct {
		Data struct {
			MFARequired bool   `json:"mfa_required"`
			MFAToken    string `json:"mfa_token"`
		}
	}
	mustDo(t, n2.MinIndex(conf.Index()), "POST", "/api/v1/auth/users/login", creds, http.StatusOK).JSON(&s2)
	if !s2.Data.MFARequired || s2.Data.MFAToken == "" {
		t.Fatal("sign-in with TOTP on did not answer a ticket")
	}
	tk := s2.Data.MFAToken

	// Five wrong codes spread over the three nodes.
	wrong := oathNow(t, setup.Data.Secret, time.Now().Add(-5*time.Minute))
	for i, name := range []string{"n1", "n2", "n3", "n1", "n2"} {
		cl := map[string]*harness.Client{"n1": n1, "n2": n2, "n3": n3}[name]
		resp, err := cl.Do(ctx, "POST", "/api/v1/auth/users/login/mfa", map[string]any{"mfa_token": tk, "code": wrong})
		if err != nil || resp.Status != http.StatusUnauthorized || resp.APIError().Error != "Invalid credentials" {
			t.Fatalf("wrong code %d on %s: %v %v", i+1, name, resp, err)
		}
	}
	// The ticket is burned on every node, even for a right code.
	for _, cl := range []*harness.Client{n3, n1} {
		resp, err := cl.Do(ctx, "POST", "/api/v1/auth/users/login/mfa", map[string]any{"mfa_token": tk, "recovery_code": on.Data.RecoveryCodes[0]})
		if err != nil || resp.Status != http.StatusUnauthorized || !strings.Contains(resp.APIError().Error, "MFA token") {
			t.Fatalf("a burned ticket on %s: %v %v", cl.BaseURL, resp, err)
		}
	}

	// A ticket exchanged on n3 is spent on n1 and n2.
	mustDo(t, n3, "POST", "/api/v1/auth/users/login", creds, http.StatusOK).JSON(&s2)
	mustDo(t, n3, "POST", "/api/v1/auth/users/login/mfa", map[string]any{"mfa_token": s2.Data.MFAToken, "recovery_code": on.Data.RecoveryCodes[1]}, http.StatusOK)
	for _, cl := range []*harness.Client{n1, n2} {
		resp, err := cl.Do(ctx, "POST", "/api/v1/auth/users/login/mfa", map[string]any{"mfa_token": s2.Data.MFAToken, "recovery_code": on.Data.RecoveryCodes[2]})
		if err != nil || resp.Status != http.StatusUnauthorized {
			t.Fatalf("a spent ticket on %s: %v %v", cl.BaseURL, resp, err)
		}
	}
	// And the recovery code used on n3 is spent everywhere.
	mustDo(t, n1, "POST", "/api/v1/auth/users/login", creds, http.StatusOK).JSON(&s2)
	resp, err := n2.Do(ctx, "POST", "/api/v1/auth/users/login/mfa", map[string]any{"mfa_token": s2.Data.MFAToken, "recovery_code": on.Data.RecoveryCodes[1]})
	if err != nil || resp.Status != http.StatusUnauthorized {
		t.Fatalf("a spent recovery code on n2: %v %v", resp, err)
	}
}
