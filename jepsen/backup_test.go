package jepsen_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"svcd/jepsen/harness"
)

// backupScript and restoreScript are the commands of docs/operations.md
// ("Backups"), run as they are printed there: SVC is the node's URL, TOKEN
// an owner's token, DIR its data directory, BACKUP where the backup goes.
const (
	backupScript = `INDEX=$(curl -s -X POST "$SVC/api/v1/admin/cluster/snapshot" \
  -H "Authorization: Bearer $TOKEN" | sed 's/.*"index":\([0-9]*\).*/\1/')
mkdir -p "$BACKUP/snapshot"
cp -a "$DIR"/raft/snapshots/*-"$INDEX"-* "$BACKUP/snapshot/"
cp -a "$DIR/node-id" "$DIR/jwt.key" "$BACKUP/"
[ -f "$DIR/encryption.key" ] && cp -a "$DIR/encryption.key" "$BACKUP/"
echo "snapshot of entry $INDEX"
`
	restoreScript = `aside="$DIR/restore-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir "$aside" "$aside/raft"
mv "$DIR"/data.db* "$aside/"
mv "$DIR/raft/raft.db" "$DIR/raft/snapshots" "$aside/raft/"
mkdir "$DIR/raft/snapshots"
cp -a "$BACKUP"/snapshot/* "$DIR/raft/snapshots/"
cp -a "$BACKUP"/*.key "$BACKUP/node-id" "$DIR/"
svcd repair verify --dir "$DIR"
`
)

// runScript runs a documented script with bash, the node's svcd first on
// PATH and env added.
func runScript(t *testing.T, nd *harness.Node, script string, env ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euc", script)
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(nd.Bin)+":"+os.Getenv("PATH"))
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("script failed: %v\n%s\n---\n%s", err, script, out)
	}
	return string(out)
}

// TestRepairRestoreBackup: the backup of docs/operations.md (a snapshot
// taken through the API, copied with the key files) restores a lone node
// whose Raft log is damaged: it starts on the snapshot, with the records
// written before the backup and the same token key, and takes writes.
func TestRepairRestoreBackup(t *testing.T) {
	skipShort(t)
	for _, tool := range []string{"bash", "curl", "sed"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found", tool)
		}
	}
	dir := t.TempDir()
	backup := filepath.Join(t.TempDir(), "backup")
	node := &harness.Node{Name: "solo"}
	node.Start(t, dir)
	waitReady(t, node)
	tok := node.Setup(t)
	admin := node.Client().WithToken(tok)
	createItems(t, admin)
	w := newAckedWriter(t)
	w.write(admin, 40)
	env := []string{"SVC=" + node.URL(), "TOKEN=" + tok, "DIR=" + dir, "BACKUP=" + backup}
	out := runScript(t, node, backupScript, env...)
	t.Logf("backup: %s", strings.TrimSpace(out))
	w.write(admin, 20) // after the backup: lost by the restore

	if err := node.Stop(); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "raft", "raft.db")
	patchBytes(t, logPath, 16+20, 0x55)
	patchBytes(t, logPath, int64(os.Getpagesize())+16+20, 0x55)
	expectStartFails(t, node, "restore the data directory from a backup")

	out = runScript(t, node, restoreScript, env...)
	if !strings.Contains(out, "everything checked is intact") {
		t.Fatalf("verify after the restore:\n%s", out)
	}
	node.Restart(t)
	waitReady(t, node)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	recs, err := harness.ListAll(ctx, admin, "items", nil) // the old token: same jwt.key
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 40 {
		t.Fatalf("%d records after the restore, want the 40 of the backup", len(recs))
	}
	resp := mustDo(t, admin, "POST", "/api/v1/items", map[string]any{"id": "afterrestore001", "seq": 1}, http.StatusCreated)
	var created struct {
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(resp.Body, &created); err != nil || created.Data.ID != "afterrestore001" {
		t.Fatalf("a write after the restore: %s (%v)", resp, err)
	}
	t.Logf("restored: %d records of the backup, writes resume at index %d", len(recs), resp.Index())
}

// patchBytes xors b into the byte at off of path.
func patchBytes(t *testing.T, path string, off int64, b byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	one := make([]byte, 1)
	if _, err := f.ReadAt(one, off); err != nil {
		t.Fatal(err)
	}
	one[0] ^= b
	if _, err := f.WriteAt(one, off); err != nil {
		t.Fatal(err)
	}
}
