package jepsen_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"svcd/jepsen/harness"
)

// TestAdminCreate: `svcd admin create EMAIL PASSWORD` writes an owner
// through the log, both when no node runs (it starts one briefly) and
// through a running node's admin socket; the admin can then sign in; a
// second admin with the same email and a weak password are refused.
func TestAdminCreate(t *testing.T) {
	skipShort(t)
	bin := harness.BuildBinary(t)
	dir := filepath.Join(t.TempDir(), "data")
	create := func(email, password string) (string, error) {
		cmd := exec.Command(bin, "admin", "create", email, password)
		cmd.Env = append(os.Environ(), "SVC_DATA_DIR="+dir, "SVC_LOG_LEVEL=warn")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := create("offline@example.com", "a-long-password-1"); err != nil || !strings.Contains(out, "created (owner)") {
		t.Fatalf("admin create without a node: %v\n%s", err, out)
	}
	node := &harness.Node{Name: "n1", Bin: bin}
	node.Start(t, dir)
	waitReady(t, node)
	if out, err := create("online@example.com", "a-long-password-2"); err != nil || !strings.Contains(out, "through the running node") {
		t.Fatalf("admin create through the running node: %v\n%s", err, out)
	}
	if out, err := create("online@example.com", "a-long-password-3"); err == nil || !strings.Contains(out, "already exists") {
		t.Fatalf("duplicate admin accepted: %v\n%s", err, out)
	}
	if out, err := create("weak@example.com", "short"); err == nil || !strings.Contains(out, "at least 12") {
		t.Fatalf("weak password accepted: %v\n%s", err, out)
	}
	for _, c := range [][2]string{{"offline@example.com", "a-long-password-1"}, {"online@example.com", "a-long-password-2"}} {
		resp, err := node.Client().Do(context.Background(), "POST", "/api/v1/admin/auth/login", map[string]string{"email": c[0], "password": c[1]})
		if err != nil || resp.Status != 200 || !strings.Contains(string(resp.Body), `"role":"owner"`) {
			t.Fatalf("login as %s: %v %s", c[0], err, resp)
		}
	}
}
