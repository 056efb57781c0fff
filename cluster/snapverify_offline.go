package cluster

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/crc64"
	"io"
	"os"
	"path/filepath"

	"svcd/fsm"
	"svcd/internal/progress"
)

// progressWriter counts the bytes written through it on prog.
type progressWriter struct{ prog *progress.Reporter }

func (p progressWriter) Write(b []byte) (int, error) {
	p.prog.AddBytes(int64(len(b)))
	return len(b), nil
}

// VerifySnapshot reads the newest snapshot of the stopped node's Raft
// directory dir whole and checks it as a restore will: its state file
// against the CRC-64 Raft recorded in meta.json, and the stream's own
// checksum trailer (fsm.SnapshotChecker). It returns the snapshot's
// directory ("" without a snapshot); damage is a *DamageError.
func VerifySnapshot(dir string) (string, error) { return VerifySnapshotProgress(dir, nil) }

// VerifySnapshotProgress is VerifySnapshot counting the bytes it reads on
// prog (nil: none), against the state file's size. The caller finishes
// prog.
func VerifySnapshotProgress(dir string, prog *progress.Reporter) (string, error) {
	snap, err := newestSnapshot(dir)
	if err != nil || snap == nil {
		return "", err
	}
	if err := checkSnapshotState(snap, prog); err != nil {
		return "", err
	}
	return snap.Dir, nil
}

// checkSnapshotState reads the snapshot's state whole and checks it
// against the CRC-64 of its meta.json and its checksum trailer. prog
// (nil: none) counts the bytes read.
func checkSnapshotState(snap *snapshotInfo, prog *progress.Reporter) error {
	metaPath := filepath.Join(snap.Dir, "meta.json")
	b, err := os.ReadFile(metaPath)
	if err != nil {
		return fmt.Errorf("cluster: read %s: %w", metaPath, err)
	}
	var meta struct{ CRC []byte }
	if err := json.Unmarshal(b, &meta); err != nil {
		return &DamageError{File: metaPath, What: fmt.Sprintf("does not decode: %v", err)}
	}
	statePath := filepath.Join(snap.Dir, "state.bin")
	f, err := os.Open(statePath)
	if err != nil {
		return fmt.Errorf("cluster: read %s: %w", statePath, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil {
		prog.SetTotalBytes(fi.Size())
	}
	sum := crc64.New(crc64.MakeTable(crc64.ECMA))
	check := fsm.NewSnapshotChecker()
	if _, err := io.Copy(io.MultiWriter(sum, check, progressWriter{prog}), f); err != nil {
		return fmt.Errorf("cluster: read %s: %w", statePath, err)
	}
	if !bytes.Equal(sum.Sum(nil), meta.CRC) {
		return &DamageError{File: statePath, What: "the snapshot's state fails the CRC-64 recorded in its meta.json"}
	}
	if err := check.Check(); err != nil {
		return &DamageError{File: statePath, What: err.Error()}
	}
	return nil
}
