package api_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"svcd/api/apitest"
)

// pbSDKDir is where npm installed pocketbase@0.28.1 and eventsource@4.1.1
// ($PB_SDK_DIR, else ~/.cache/svcd/pbsdk, where .ci/run puts them).
func pbSDKDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("PB_SDK_DIR")
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".cache", "svcd", "pbsdk")
	}
	const how = "npm install --prefix ~/.cache/svcd/pbsdk pocketbase@0.28.1 eventsource@4.1.1 (or set PB_SDK_DIR)"
	for _, pkg := range []string{"pocketbase", "eventsource"} {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", pkg, "package.json")); err != nil {
			apitest.NeedPeer(t, "the PocketBase JavaScript SDK", how)
		}
	}
	if _, err := exec.LookPath("node"); err != nil {
		apitest.NeedPeer(t, "node", "apt-get install nodejs")
	}
	return dir
}

// TestPocketBaseSDKCluster runs the official PocketBase JavaScript SDK,
// its calls as a PocketBase app makes them, against a three-node cluster
// (testdata/pocketbase/sdk.mjs): the superuser signs in, creates an auth
// and a base collection; a user signs up, signs in and refreshes; records
// are created, listed with a filter, a sort, an expand and pages, viewed,
// updated (with the views+ modifier) and deleted; a file is uploaded and
// read back from its URL on two nodes; a batch runs; a realtime
// subscription on one node receives a change written through another,
// and one whose subscription request reached a third node.
func TestPocketBaseSDKCluster(t *testing.T) {
	sdk := pbSDKDir(t)
	c := apitest.StartCluster(t, 3, apitest.Options{})
	c.AdminToken(t) // the first admin: the SDK's superuser
	dir := t.TempDir()
	if err := os.Symlink(filepath.Join(sdk, "node_modules"), filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile("testdata/pocketbase/sdk.mjs")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sdk.mjs"), script, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "sdk.mjs", c.Nodes[0].URL, c.Nodes[1].URL, c.Nodes[2].URL,
		apitest.AdminEmail, apitest.AdminPassword)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	t.Logf("the SDK's run:\n%s", out)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	last := lines[len(lines)-1]
	if err != nil || !strings.HasSuffix(last, " 0 failed") {
		t.Fatalf("the PocketBase SDK script failed (%v): %s", err, last)
	}
	if !strings.HasPrefix(last, "12 passed") {
		t.Fatalf("the SDK script ran %s; it has 12 steps", last)
	}
}
