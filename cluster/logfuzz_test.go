package cluster_test

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"go.etcd.io/bbolt"

	"svcd/cluster"
	"svcd/fsm"
)

// fuzzRunLimit bounds one fuzz input: a start on a damaged file must end.
const fuzzRunLimit = 20 * time.Second

// FuzzOpenDamagedLog damages the raft.db of a real node (logFixture) and
// starts a node on it: VerifyLog and cluster.Open must each return an
// error or succeed, never panic (in any goroutine: bbolt panics in one of
// its own on a damaged file) and never hang, and agree with each other.
// The input is a list of 5-byte patches: a big-endian offset into the
// file (modulo its size) and the byte to write there; an input whose
// length is not a multiple of 5 also truncates the file at the offset of
// its last patch.
func FuzzOpenDamagedLog(f *testing.F) {
	base := buildLogFixture(f, f.TempDir())
	page := uint32(os.Getpagesize())
	patch := func(off uint32, b byte) []byte { return append(binary.BigEndian.AppendUint32(nil, off), b) }
	f.Add([]byte{})                                         // intact
	f.Add(patch(16+20, 0x55))                               // meta page 0
	f.Add(append(patch(16+20, 0x55), patch(page+36, 1)...)) // both meta pages
	f.Add(patch(2*page+8, 0xff))                            // a page's type
	f.Add(patch(3*page+10, 0xff))                           // a page's element count
	f.Add(patch(3*page+16+4, 0x7f))                         // an element's position
	f.Add(append(patch(4*page+100, 0), 0))                  // truncated
	f.Fuzz(func(t *testing.T, damage []byte) {
		dir := t.TempDir()
		copyDir(t, base.dir, dir)
		path := filepath.Join(dir, "raft", "raft.db")
		applyPatches(t, path, damage)
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, verr := cluster.VerifyLog(filepath.Join(dir, "raft"))
			store, err := openPutStore(filepath.Join(dir, "data.db"))
			if err != nil {
				t.Errorf("open the replica: %v", err)
				return
			}
			defer store.Close()
			n, oerr := cluster.Open(cluster.Config{NodeID: "fixture", Dir: filepath.Join(dir, "raft"), Logger: quietLogger()}, store)
			if oerr == nil {
				n.Shutdown()
			}
			for _, err := range []error{verr, oerr} {
				if err != nil && !errors.Is(err, cluster.ErrDamaged) {
					t.Errorf("not a damage error: %v", err)
				}
			}
			// The start also refuses a log behind the replica, which
			// VerifyLog does not know.
			if verr != nil && oerr == nil || verr == nil && oerr != nil && !strings.Contains(oerr.Error(), "entries are lost") {
				t.Errorf("VerifyLog says %v, the start %v", verr, oerr)
			}
		}()
		select {
		case <-done:
		case <-time.After(fuzzRunLimit):
			t.Fatalf("no answer within %s", fuzzRunLimit)
		}
	})
}

// applyPatches writes the fuzzer's patches into path (FuzzOpenDamagedLog).
func applyPatches(t *testing.T, path string, damage []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var last int
	for i := 0; i+5 <= len(damage); i += 5 {
		last = int(binary.BigEndian.Uint32(damage[i:]) % uint32(len(b)))
		b[last] = damage[i+4]
	}
	if len(damage)%5 != 0 {
		b = b[:last]
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// FuzzLogEntryValue stores fuzzer-chosen bytes as the value of one entry
// of an otherwise intact log (a structurally sound file, so the bytes
// reach raft-boltdb's decoder and the entry checks): VerifyLog must
// refuse or accept them without a panic, and what it accepts is an entry
// Raft and the state machine can read.
func FuzzLogEntryValue(f *testing.F) {
	for _, l := range []raft.Log{
		{Index: 2, Term: 1, Type: raft.LogCommand, Data: put(fixtureKey(2)).Encode()},
		{Index: 2, Term: 1, Type: raft.LogConfiguration, Data: raft.EncodeConfiguration(raft.Configuration{
			Servers: []raft.Server{{ID: "a", Address: "127.0.0.1:1", Suffrage: raft.Voter}}})},
		{Index: 2, Term: 1, Type: raft.LogNoop},
	} {
		f.Add(encodeEntry(f, l))
	}
	f.Fuzz(func(t *testing.T, value []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, "raft.db")
		writeLogWith(t, path, value)
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, err := cluster.VerifyLog(dir)
			if err != nil {
				if !errors.Is(err, cluster.ErrDamaged) {
					t.Errorf("not a damage error: %v", err)
				}
				return
			}
			logs, err := raftboltdb.New(raftboltdb.Options{Path: path, BoltOptions: &bbolt.Options{ReadOnly: true, Timeout: time.Second}})
			if err != nil {
				t.Errorf("reopen: %v", err)
				return
			}
			defer logs.Close()
			var l raft.Log
			if err := logs.GetLog(2, &l); err != nil {
				t.Errorf("accepted, then GetLog: %v", err)
				return
			}
			switch l.Type {
			case raft.LogCommand:
				if _, err := fsm.Decode(l.Data); err != nil {
					t.Errorf("accepted a command that does not decode: %v", err)
				}
			case raft.LogConfiguration:
				raft.DecodeConfiguration(l.Data) // panics on what it cannot read
			}
		}()
		select {
		case <-done:
		case <-time.After(fuzzRunLimit):
			t.Fatalf("no answer within %s", fuzzRunLimit)
		}
	})
}

// encodeEntry is the value raft-boltdb stores for l.
func encodeEntry(tb testing.TB, l raft.Log) []byte {
	tb.Helper()
	dir := tb.TempDir()
	path := filepath.Join(dir, "raft.db")
	logs, err := raftboltdb.New(raftboltdb.Options{Path: path, NoSync: true})
	if err != nil {
		tb.Fatal(err)
	}
	if err := logs.StoreLog(&l); err != nil {
		tb.Fatal(err)
	}
	logs.Close()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	var v []byte
	db.View(func(tx *bbolt.Tx) error {
		v = append(v, tx.Bucket([]byte("logs")).Get(indexKey(l.Index))...)
		return nil
	})
	return v
}

// writeLogWith writes a log of three entries in term 1 (a membership
// change, a command, a command) and the current term 1, then replaces the
// second entry's stored value with value.
func writeLogWith(t *testing.T, path string, value []byte) {
	t.Helper()
	logs, err := raftboltdb.New(raftboltdb.Options{Path: path, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	boot := raft.EncodeConfiguration(raft.Configuration{Servers: []raft.Server{{ID: "a", Address: "127.0.0.1:1", Suffrage: raft.Voter}}})
	err = errors.Join(
		logs.StoreLogs([]*raft.Log{
			{Index: 1, Term: 1, Type: raft.LogConfiguration, Data: boot},
			{Index: 2, Term: 1, Type: raft.LogCommand, Data: put("two").Encode()},
			{Index: 3, Term: 1, Type: raft.LogCommand, Data: put("three").Encode()},
		}),
		logs.SetUint64([]byte("CurrentTerm"), 1),
		logs.Close(),
	)
	if err != nil {
		t.Fatal(err)
	}
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{NoSync: true, NoFreelistSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bbolt.Tx) error { return tx.Bucket([]byte("logs")).Put(indexKey(2), value) })
	if err != nil {
		t.Fatal(err)
	}
}
