package cluster

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
)

// TestCompactLog: after most entries are deleted (as after a snapshot),
// the file is rewritten smaller and keeps every remaining entry and the
// stable store.
func TestCompactLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "raft.db")
	st, err := raftboltdb.New(raftboltdb.Options{Path: path, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	payload := make([]byte, 4096)
	var logs []*raft.Log
	for i := uint64(1); i <= 3000; i++ {
		binary.BigEndian.PutUint64(payload, i)
		logs = append(logs, &raft.Log{Index: i, Term: 1, Type: raft.LogCommand, Data: append([]byte(nil), payload...)})
	}
	if err := st.StoreLogs(logs); err != nil {
		t.Fatal(err)
	}
	if err := st.SetUint64([]byte("CurrentTerm"), 7); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteRange(1, 2900); err != nil {
		t.Fatal(err)
	}
	st.Close()
	before, _ := os.Stat(path)
	did, err := compactLog(path, 1<<20)
	if err != nil || !did {
		t.Fatalf("compact: %v %v", did, err)
	}
	after, _ := os.Stat(path)
	if after.Size()*2 > before.Size() {
		t.Fatalf("file %d bytes before, %d after", before.Size(), after.Size())
	}
	st, err = raftboltdb.New(raftboltdb.Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	first, _ := st.FirstIndex()
	last, _ := st.LastIndex()
	if first != 2901 || last != 3000 {
		t.Fatalf("log [%d, %d] after compaction", first, last)
	}
	var l raft.Log
	if err := st.GetLog(2950, &l); err != nil || binary.BigEndian.Uint64(l.Data) != 2950 {
		t.Fatalf("entry 2950: %v", err)
	}
	if term, err := st.GetUint64([]byte("CurrentTerm")); err != nil || term != 7 {
		t.Fatalf("stable store lost: %d %v", term, err)
	}
	if did, _ := compactLog(path, 1<<20); did {
		t.Fatal("a compact file was compacted again")
	}
}
