package fsm_test

import (
	"bytes"
	"database/sql"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"svcd/fsm"
)

// needleValue is the value of one record in checksumSource's snapshot: a
// test changes one of its letters inside the page that holds it.
const needleValue = "needle-value-of-record-k000077"

// checksumSource builds a store of a few hundred records, one of them with
// needleValue, and returns its snapshot stream and its digest.
func checksumSource(t *testing.T) ([]byte, map[string]string) {
	t.Helper()
	src, _ := openStore(t, filepath.Join(t.TempDir(), "src.db"), nil)
	mustApply(t, src, ddlEntry(1, kvDDL))
	var batch []fsm.Entry
	for i := uint64(2); i <= 300; i++ {
		v := strings.Repeat("payload", 20)
		if i == 77 {
			v = needleValue
		}
		batch = append(batch, putEntry(i, logKey(i), v))
		if len(batch) == 50 {
			mustApply(t, src, batch...)
			batch = nil
		}
	}
	mustApply(t, src, batch...)
	sn, err := src.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer sn.Release()
	return writeSnapshot(t, sn), digest(t, src)
}

// liveReplica is a store holding entries 1..20 of logEntry, the target of
// a restore that must be refused.
type liveReplica struct {
	s      *fsm.Store
	stalls *stallLog
	dir    string
	before map[string]string
	events eventLog
}

func openLiveReplica(t *testing.T) *liveReplica {
	t.Helper()
	l := &liveReplica{dir: t.TempDir()}
	l.s, l.stalls = openStore(t, filepath.Join(l.dir, "live.db"), nil)
	mustApply(t, l.s, ddlEntry(1, kvDDL))
	for i := uint64(2); i <= 20; i++ {
		apply(t, l.s, logEntry(i))
	}
	l.before = digest(t, l.s)
	l.s.Observe(l.events.observe)
	return l
}

// checkUntouched fails unless the replica is exactly as before the refused
// restore: same data and index, no stall, no restore event, no file left
// behind, and it still serves reads.
func (l *liveReplica) checkUntouched(t *testing.T) {
	t.Helper()
	if n := len(l.stalls.list()); n != 0 {
		t.Errorf("the state machine stalled: %+v", l.stalls.list())
	}
	if got := l.s.AppliedIndex(); got != 20 {
		t.Errorf("AppliedIndex = %d, want 20", got)
	}
	if got := digest(t, l.s); !reflect.DeepEqual(got, l.before) {
		t.Errorf("the live database changed")
	}
	if got, want := kvKeys(t, l.s), keysUpTo(20); !slices.Equal(got, want) {
		t.Errorf("reads after the refused restore: keys %v, want %v", got, want)
	}
	for _, batch := range l.events.all() {
		for _, ev := range batch {
			if ev.Kind == fsm.KindRestore {
				t.Errorf("restore event emitted for a refused restore: %+v", ev)
			}
		}
	}
	entries, err := os.ReadDir(l.dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "live.db") || strings.Contains(e.Name(), "restore") {
			t.Errorf("left behind %s", e.Name())
		}
	}
}

// flipped returns a copy of data with the byte at off changed.
func flipped(data []byte, off int) []byte {
	out := bytes.Clone(data)
	out[off] ^= 0x01
	return out
}

// TestRestoreRefusesDamagedSnapshot changes one byte of a snapshot stream
// where SQLite's own checks do not look (a header field, a letter inside
// a record's value) and in each field of the checksum trailer: Restore
// refuses each with an error naming the mismatch, and the live database
// stays, serving reads and applying.
func TestRestoreRefusesDamagedSnapshot(t *testing.T) {
	t.Parallel()
	data, _ := checksumSource(t)
	needle := bytes.Index(data, []byte(needleValue))
	if needle < 0 || bytes.Contains(data[needle+1:], []byte(needleValue)) {
		t.Fatalf("the record value must occur exactly once in the snapshot (first at %d)", needle)
	}
	trailer := len(data) - fsm.SnapshotTrailerSize
	tests := []struct {
		name string
		off  int
		want string
	}{
		{"header page: application id", 71, "checksum mismatch"},
		{"header page: user version", 63, "checksum mismatch"},
		{"inside a record's value", needle + len("needle-v"), "checksum mismatch"},
		{"last database byte", trailer - 1, "checksum mismatch"},
		{"trailer magic", trailer, "neither ends with a checksum trailer"},
		{"trailer version", trailer + 11, "unknown checksum trailer version"},
		{"trailer length", trailer + 19, "length mismatch"},
		{"trailer checksum", trailer + 20, "checksum mismatch"},
		{"trailer checksum, last byte", len(data) - 1, "checksum mismatch"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l := openLiveReplica(t)
			err := l.s.Restore(bytes.NewReader(flipped(data, tc.off)))
			if err == nil {
				t.Fatalf("Restore accepted a snapshot with byte %d of %d changed", tc.off, len(data))
			}
			if !errors.Is(err, fsm.ErrSnapshotDamaged) {
				t.Errorf("error %q does not wrap ErrSnapshotDamaged", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
			l.checkUntouched(t)
			mustApply(t, l.s, putEntry(21, "after", "ok"))
			if got := countRows(t, l.s, "kv"); got != len(keysUpTo(20))+1 {
				t.Errorf("%d rows after a new apply", got)
			}
		})
	}
}

// TestRestoreRefusesEveryChangedByte changes one byte at a time at 64
// places spread over the database bytes and at every byte of the trailer:
// each stream is refused, and the live replica never changes.
func TestRestoreRefusesEveryChangedByte(t *testing.T) {
	t.Parallel()
	data, _ := checksumSource(t)
	l := openLiveReplica(t)
	trailer := len(data) - fsm.SnapshotTrailerSize
	var offs []int
	for i := 0; i < 64; i++ {
		offs = append(offs, i*trailer/64+i%7)
	}
	for off := trailer; off < len(data); off++ {
		offs = append(offs, off)
	}
	accepted := 0
	for _, off := range offs {
		err := l.s.Restore(bytes.NewReader(flipped(data, off)))
		if err == nil {
			accepted++
			t.Errorf("byte %d of %d changed: Restore accepted it", off, len(data))
			if accepted == 5 {
				t.Fatal("giving up after 5 accepted streams")
			}
			continue
		}
		if !errors.Is(err, fsm.ErrSnapshotDamaged) {
			t.Errorf("byte %d: error %q does not wrap ErrSnapshotDamaged", off, err)
		}
	}
	l.checkUntouched(t)
}

// chunkReader hands out its data in pieces of random size (1 byte to a
// few pages), so the trailer is split across reads in every way.
type chunkReader struct {
	data []byte
	rng  *rand.Rand
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), len(c.data), 1+c.rng.IntN(3*4096))
	if c.rng.IntN(4) == 0 {
		n = min(n, 1+c.rng.IntN(60))
	}
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

// TestRestoreChecksummedSnapshot restores a clean snapshot whatever the
// size of the reads that deliver it.
func TestRestoreChecksummedSnapshot(t *testing.T) {
	t.Parallel()
	data, want := checksumSource(t)
	tests := []struct {
		name string
		r    func() io.Reader
	}{
		{"whole", func() io.Reader { return bytes.NewReader(data) }},
		{"one byte at a time", func() io.Reader { return iotest.OneByteReader(bytes.NewReader(data)) }},
		{"half reads", func() io.Reader { return iotest.HalfReader(bytes.NewReader(data)) }},
		{"random chunks", func() io.Reader { return &chunkReader{data: data, rng: rand.New(rand.NewPCG(3, 5))} }},
		{"trailer in its own read", func() io.Reader {
			cut := len(data) - fsm.SnapshotTrailerSize
			return io.MultiReader(bytes.NewReader(data[:cut]), bytes.NewReader(data[cut:]))
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, _ := openStore(t, filepath.Join(t.TempDir(), "live.db"), nil)
			if err := s.Restore(tc.r()); err != nil {
				t.Fatalf("Restore: %v", err)
			}
			if got := digest(t, s); !reflect.DeepEqual(got, want) {
				t.Errorf("restored digest differs from the source")
			}
			if got := s.AppliedIndex(); got != 300 {
				t.Errorf("AppliedIndex = %d, want 300", got)
			}
		})
	}
}

// TestRestoreWithoutChecksumTrailer: streams without the trailer are
// accepted as before, checked by SQLite alone: a snapshot written by an
// older binary (the database bytes alone) and a plain SQLite file uploaded
// as a backup.
func TestRestoreWithoutChecksumTrailer(t *testing.T) {
	t.Parallel()
	data, want := checksumSource(t)
	old := data[:len(data)-fsm.SnapshotTrailerSize]

	seed := filepath.Join(t.TempDir(), "backup.db")
	seedDB(t, seed, kvDDL,
		`INSERT INTO kv VALUES ('uploaded', 'yes', 9)`,
		`CREATE TABLE _svc_meta (k TEXT PRIMARY KEY, v INTEGER NOT NULL) WITHOUT ROWID`,
		`INSERT INTO _svc_meta VALUES ('applied_index', 9)`,
		`PRAGMA journal_mode = DELETE`)
	backup, err := os.ReadFile(seed)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("older binary's snapshot", func(t *testing.T) {
		s, _ := openStore(t, filepath.Join(t.TempDir(), "live.db"), nil)
		if err := s.Restore(bytes.NewReader(old)); err != nil {
			t.Fatalf("Restore: %v", err)
		}
		if got := digest(t, s); !reflect.DeepEqual(got, want) {
			t.Errorf("restored digest differs from the source")
		}
	})
	t.Run("uploaded backup file", func(t *testing.T) {
		s, _ := openStore(t, filepath.Join(t.TempDir(), "live.db"), nil)
		if err := s.Restore(iotest.HalfReader(bytes.NewReader(backup))); err != nil {
			t.Fatalf("Restore: %v", err)
		}
		if got := kvKeys(t, s); !slices.Equal(got, []string{"uploaded"}) {
			t.Errorf("keys = %v, want [uploaded]", got)
		}
		if got := s.AppliedIndex(); got != 9 {
			t.Errorf("AppliedIndex = %d, want 9", got)
		}
	})
	t.Run("older snapshot cut inside a page", func(t *testing.T) {
		l := openLiveReplica(t)
		err := l.s.Restore(bytes.NewReader(old[:len(old)-100]))
		if !errors.Is(err, fsm.ErrSnapshotDamaged) {
			t.Errorf("Restore = %v, want ErrSnapshotDamaged", err)
		}
		l.checkUntouched(t)
	})
}

// TestSnapshotStreamIsSQLite: the trailer does not stop SQLite from
// opening a snapshot stream saved to a file (a backup kept by an operator
// can be inspected with the sqlite3 shell).
func TestSnapshotStreamIsSQLite(t *testing.T) {
	t.Parallel()
	data, _ := checksumSource(t)
	path := filepath.Join(t.TempDir(), "snapshot.db")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	db := openPlainDB(t, path)
	var res string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&res); err != nil || res != "ok" {
		t.Fatalf("integrity_check = %q, %v", res, err)
	}
	var v string
	if err := db.QueryRow(`SELECT v FROM kv WHERE k = ?`, logKey(77)).Scan(&v); err != nil || v != needleValue {
		t.Fatalf("record = %q, %v", v, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(after, data) {
		t.Errorf("reading the file changed it (%d bytes, was %d)", len(after), len(data))
	}
}

// openPlainDB opens path read-only through the SQLite driver, as a tool
// outside the service would.
func openPlainDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
