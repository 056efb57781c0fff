package cluster

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"svcd/fsm"
)

// snapshotStream returns a real snapshot stream of an fsm store (the
// database bytes and their checksum trailer).
func snapshotStream(t *testing.T) []byte {
	t.Helper()
	s, err := fsm.Open(fsm.Options{
		Path:     filepath.Join(t.TempDir(), "data.db"),
		Registry: fsm.NewRegistry(),
		Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sn, err := s.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer sn.Release()
	var buf bytes.Buffer
	if _, err := sn.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestStoredSnapshotIsChecked: a snapshot stored through the node's
// snapshot store (as raft stores one received from the leader before
// restoring it) is kept only if its checksum trailer matches. A damaged one
// is refused at Close and leaves nothing: no snapshot a restart would try
// to restore, no directory. Streams without a trailer are kept as before.
func TestStoredSnapshotIsChecked(t *testing.T) {
	stream := snapshotStream(t)
	damaged := bytes.Clone(stream)
	damaged[len(damaged)/3] ^= 0x01
	plain := stream[:len(stream)-52] // an older binary's snapshot: no 52-byte trailer (fsm/snapshot_trailer.go)

	tests := []struct {
		name    string
		data    []byte
		refused bool
	}{
		{"clean", stream, false},
		{"one byte changed", damaged, true},
		{"trailer cut off inside", stream[:len(stream)-1], true},
		{"older snapshot without trailer", plain, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			s, err := openSnapshotStore(base, hclog.NewNullLogger(), slog.New(slog.NewTextHandler(io.Discard, nil)))
			if err != nil {
				t.Fatal(err)
			}
			sink, err := s.Create(1, 42, 3, raft.Configuration{}, 1, nil)
			if err != nil {
				t.Fatal(err)
			}
			// raft copies the leader's stream into the sink (io.Copy).
			if _, err := io.Copy(sink, bytes.NewReader(tc.data)); err != nil {
				t.Fatal(err)
			}
			err = sink.Close()
			metas, lerr := s.List()
			if lerr != nil {
				t.Fatal(lerr)
			}
			if tc.refused {
				if !errors.Is(err, fsm.ErrSnapshotDamaged) {
					t.Errorf("Close = %v, want an error wrapping fsm.ErrSnapshotDamaged", err)
				}
				if len(metas) != 0 {
					t.Errorf("the damaged snapshot was kept: %s of %d bytes", metas[0].ID, metas[0].Size)
				}
			} else {
				if err != nil {
					t.Fatalf("Close: %v", err)
				}
				if len(metas) != 1 || metas[0].Index != 42 || metas[0].Size != int64(len(tc.data)) {
					t.Fatalf("List() = %d snapshots, want the one at index 42 of %d bytes", len(metas), len(tc.data))
				}
				_, rc, err := s.Open(metas[0].ID)
				if err != nil {
					t.Fatal(err)
				}
				got, _ := io.ReadAll(rc)
				rc.Close()
				if !bytes.Equal(got, tc.data) {
					t.Errorf("stored snapshot differs from the stream")
				}
			}
			if got := tmpDirs(t, filepath.Join(base, "snapshots")); len(got) != 0 {
				t.Errorf(".tmp directories left: %v", got)
			}
		})
	}
}

// tmpDirs lists the <id>.tmp directories under dir.
func tmpDirs(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && strings.HasSuffix(e.Name(), ".tmp") {
			out = append(out, e.Name())
		}
	}
	return out
}
