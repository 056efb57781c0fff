package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/hashicorp/raft"
)

// snapshotInfo is the newest complete snapshot of a Raft directory.
type snapshotInfo struct {
	Dir  string // its directory
	Meta raft.SnapshotMeta
}

// newestSnapshot finds the newest complete snapshot under dir/snapshots
// by its directory name (hashicorp/raft names one "<term>-<index>-<ms>"
// and writes it as "<name>.tmp" until it is complete) and checks what
// Raft reads of it at start: its meta.json decodes and agrees with its
// name, it has a voter, and its state file has the recorded size (Raft
// verifies the state's CRC itself when it restores it). Older snapshots
// are not checked: Raft keeps them as fallbacks, and a crash while it
// deletes one may leave it incomplete. nil without a snapshot.
func newestSnapshot(dir string) (*snapshotInfo, error) {
	root := filepath.Join(dir, "snapshots")
	entries, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cluster: list snapshots: %w", err)
	}
	var best string
	var bestKey [3]uint64
	for _, e := range entries {
		key, ok := snapshotKey(e.Name())
		if !e.IsDir() || !ok {
			continue
		}
		if best == "" || key[0] > bestKey[0] || key[0] == bestKey[0] && (key[1] > bestKey[1] || key[1] == bestKey[1] && key[2] > bestKey[2]) {
			best, bestKey = e.Name(), key
		}
	}
	if best == "" {
		return nil, nil
	}
	sdir := filepath.Join(root, best)
	metaPath := filepath.Join(sdir, "meta.json")
	b, err := os.ReadFile(metaPath)
	if err != nil {
		return nil, &DamageError{File: metaPath, What: fmt.Sprintf("the newest snapshot's metadata cannot be read: %v", err)}
	}
	var meta raft.SnapshotMeta
	if err := json.Unmarshal(b, &meta); err != nil {
		return nil, &DamageError{File: metaPath, What: fmt.Sprintf("the newest snapshot's metadata does not decode: %v", err)}
	}
	if meta.Term != bestKey[0] || meta.Index != bestKey[1] {
		return nil, &DamageError{File: metaPath, What: fmt.Sprintf("the snapshot named %s says term %d, index %d", best, meta.Term, meta.Index)}
	}
	if meta.Version > 0 {
		if err := checkConfiguration(meta.Configuration); err != nil {
			return nil, &DamageError{File: metaPath, What: fmt.Sprintf("the newest snapshot's membership: %v", err)}
		}
	}
	statePath := filepath.Join(sdir, "state.bin")
	fi, err := os.Stat(statePath)
	if err != nil {
		return nil, &DamageError{File: statePath, What: fmt.Sprintf("the newest snapshot's state: %v", err)}
	}
	if fi.Size() != meta.Size {
		return nil, &DamageError{File: statePath, What: fmt.Sprintf("the newest snapshot's state has %d bytes, its metadata says %d", fi.Size(), meta.Size)}
	}
	return &snapshotInfo{Dir: sdir, Meta: meta}, nil
}

// snapshotKey parses a complete snapshot's directory name.
func snapshotKey(name string) ([3]uint64, bool) {
	var key [3]uint64
	parts := strings.Split(name, "-")
	if len(parts) != 3 {
		return key, false
	}
	for i, p := range parts {
		v, err := strconv.ParseUint(p, 10, 64)
		if err != nil {
			return key, false
		}
		key[i] = v
	}
	return key, true
}
