package jepsen_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"svcd/jepsen/harness"
)

const (
	snapThreshold = 64
	snapRecords   = 600
	// snapTail is how many records the test writes after the newest
	// snapshot, so a restore must replay them from the log.
	snapTail = 10
)

var snapEnv = []string{
	fmt.Sprintf("SVC_RAFT_SNAPSHOT_THRESHOLD=%d", snapThreshold),
	"SVC_RAFT_SNAPSHOT_INTERVAL=200ms",
	"SVC_RAFT_TRAILING_LOGS=32",
}

// snapshotMeta is the part of a hashicorp/raft file snapshot's meta.json
// the test reads.
type snapshotMeta struct {
	ID    string
	Index uint64
	Term  uint64
}

// snapshots lists the complete snapshots in <data>/raft/snapshots/, newest
// (highest index) last.
func snapshots(t *testing.T, dataDir string) []snapshotMeta {
	t.Helper()
	dir := filepath.Join(dataDir, "raft", "snapshots")
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatalf("snapshots: %v", err)
	}
	var out []snapshotMeta
	for _, e := range entries {
		if !e.IsDir() || strings.HasSuffix(e.Name(), ".tmp") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name(), "meta.json"))
		if err != nil {
			continue // being written or reaped
		}
		var m snapshotMeta
		if json.Unmarshal(b, &m) != nil {
			continue
		}
		m.ID = e.Name()
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Index < out[j].Index })
	return out
}

// settledSnapshot waits until a snapshot exists that leaves fewer than the
// threshold of entries up to lastIndex uncovered, so no further automatic
// snapshot is due, and returns the newest.
func settledSnapshot(t *testing.T, dataDir string, lastIndex uint64) snapshotMeta {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		s := snapshots(t, dataDir)
		if len(s) > 0 && s[len(s)-1].Index+snapThreshold > lastIndex {
			time.Sleep(300 * time.Millisecond) // let a snapshot in progress land
			if s2 := snapshots(t, dataDir); s2[len(s2)-1].Index == s[len(s)-1].Index {
				return s[len(s)-1]
			}
			continue
		}
		if time.Now().After(deadline) {
			t.Fatalf("no snapshot covering up to within %d entries of index %d after 15 s; snapshots: %+v",
				snapThreshold, lastIndex, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

type snapWriter struct {
	t     *testing.T
	c     *harness.Client
	n     int
	index uint64 // X-Svc-Index of the last write
}

// write creates the next record (id "snap" + 11 digits) and returns its id.
func (w *snapWriter) write() string {
	w.t.Helper()
	id := fmt.Sprintf("snap%011d", w.n)
	resp, err := w.c.Do(context.Background(), "POST", "/api/v1/items",
		map[string]any{"id": id, "seq": w.n + 1, "writer": "snapshot"}) // a required number may not be 0
	if err != nil {
		w.t.Fatalf("write %s: %v", id, err)
	}
	if resp.Status != http.StatusCreated {
		w.t.Fatalf("write %s: %s", id, resp)
	}
	if resp.Index() <= w.index {
		w.t.Fatalf("write %s: X-Svc-Index %d not above the previous write's %d", id, resp.Index(), w.index)
	}
	w.n++
	w.index = resp.Index()
	return id
}

// content is every record of items, sorted by id, as one JSON array.
func content(t *testing.T, c *harness.Client) ([]harness.Record, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	recs, err := harness.ListAll(ctx, c, "items", url.Values{"sort": {"id"}})
	if err != nil {
		t.Fatalf("read content: %v", err)
	}
	sort.SliceStable(recs, func(i, j int) bool { return recs[i].ID < recs[j].ID })
	var buf bytes.Buffer
	buf.WriteByte('[')
	for i, r := range recs {
		if i > 0 {
			buf.WriteString(",\n")
		}
		buf.Write(r.Raw)
	}
	buf.WriteString("]\n")
	return recs, buf.Bytes()
}

// contentAfterReady checks that the content read right after the node
// became ready is want: a ready node has replayed its whole log.
func contentAfterReady(t *testing.T, stage string, c *harness.Client, want []byte) {
	t.Helper()
	_, got := content(t, c)
	sameContent(t, stage, want, got)
}

func sameContent(t *testing.T, stage string, want, got []byte) {
	t.Helper()
	if bytes.Equal(want, got) {
		return
	}
	wl, gl := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	for i := range max(len(wl), len(gl)) {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			t.Fatalf("%s: content differs (%d vs %d lines); first difference at record %d:\nwant %s\ngot  %s",
				stage, len(wl), len(gl), i, w, g)
		}
	}
}

// TestSnapshotRestore: with snapshots every 64 entries, the content
// survives a clean restart, and a crash that also loses the SQLite files
// (restore from the Raft snapshot plus replay of the log tail).
func TestSnapshotRestore(t *testing.T) {
	skipShort(t)
	dir := t.TempDir()
	node := &harness.Node{Name: "n1"}
	node.Start(t, dir, snapEnv...)
	waitReady(t, node)
	admin := node.Client().WithToken(node.Setup(t))
	createItems(t, admin)

	w := &snapWriter{t: t, c: admin}
	start := time.Now()
	for range snapRecords {
		w.write()
	}
	t.Logf("%d sequential writes in %s, last index %d", snapRecords, time.Since(start).Round(time.Millisecond), w.index)

	// Leave a tail of entries that no snapshot covers: settle, then write
	// fewer than the threshold allows; when the gap is already too large,
	// push past it to trigger one more snapshot and settle again.
	var snap snapshotMeta
	for tries := 0; ; tries++ {
		snap = settledSnapshot(t, dir, w.index)
		gap := w.index - snap.Index
		if room := snapThreshold - 1 - int(gap); room >= snapTail+2 || tries == 3 {
			for range snapTail {
				w.write()
			}
			break
		}
		for range snapThreshold - int(gap) + 1 {
			w.write()
		}
	}
	if s := snapshots(t, dir); len(s) > 0 && s[len(s)-1].Index != snap.Index {
		t.Logf("note: a snapshot was taken after the tail writes: %+v", s)
		snap = s[len(s)-1]
	}
	all := snapshots(t, dir)
	t.Logf("%d snapshot(s) on disk, newest %s (index %d); last write index %d: %d log entries past the snapshot",
		len(all), snap.ID, snap.Index, w.index, w.index-snap.Index)
	if len(all) == 0 {
		t.Fatal("no snapshot directory in raft/snapshots")
	}

	recs, want := content(t, admin)
	if len(recs) != w.n {
		t.Fatalf("read %d records, wrote %d", len(recs), w.n)
	}

	// Clean stop and restart.
	if err := node.Stop(); err != nil {
		t.Fatalf("SIGTERM: %v", err)
	}
	node.Restart(t)
	t.Logf("restart after SIGTERM: ready in %s", waitReady(t, node).Round(time.Millisecond))
	contentAfterReady(t, "after SIGTERM and restart", admin, want)

	// Crash and lose the database: the node must rebuild it from the
	// snapshot and the log.
	if err := node.Kill(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"data.db", "data.db-wal", "data.db-shm"} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	node.Restart(t)
	t.Logf("restart after SIGKILL and deleting data.db*: ready in %s", waitReady(t, node).Round(time.Millisecond))
	contentAfterReady(t, "after SIGKILL, deleting data.db and restart", admin, want)

	// New writes still work, continue the log, and are readable.
	before := w.index
	var added []string
	for range 5 {
		added = append(added, w.write())
	}
	if w.index <= before {
		t.Fatalf("index went backwards after restore: %d then %d", before, w.index)
	}
	recs, _ = content(t, admin)
	have := map[string]bool{}
	for _, r := range recs {
		have[r.ID] = true
	}
	for _, id := range added {
		if !have[id] {
			t.Errorf("record %s written after the restore is missing", id)
		}
	}
	if len(recs) != w.n {
		t.Errorf("after new writes: %d records, want %d", len(recs), w.n)
	}
}
