package backup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"svcd/engine"
)

// Peers is the cluster as a restore needs it: the file a restore installs
// is copied to the other nodes before the command naming it is proposed,
// and a node that lacks it when it applies the command fetches it (the
// composition root adapts the cluster's blob channel, cluster/blobs).
type Peers interface {
	// Push copies the file at path to the other members under name; it
	// returns once a majority of the voters hold it (this node's copy
	// counts), and goes on copying to the rest in the background.
	// ErrNoMajority when too few could be reached.
	Push(ctx context.Context, name, path string) error
	// Fetch copies name from a peer into dir, checking its SHA-256.
	Fetch(ctx context.Context, dir, name, sha256 string) error
}

// ErrNoMajority is Peers.Push reaching too few voters.
var ErrNoMajority = errors.New("backup: the file did not reach a majority of the voters")

// restoreCmd is the restore command: the file is named by its digest.
type restoreCmd struct {
	SHA256        string `json:"sha256"`
	Size          int64  `json:"size"`
	SchemaVersion int64  `json:"schema_version"`
	// BackupIndex is the applied index the backup holds.
	BackupIndex uint64 `json:"backup_index"`
	// Now is the restore's time: the token floor of accounts deleted
	// since the backup.
	Now int64 `json:"now"`
	// By is the admin who restored.
	By string `json:"by,omitempty"`
}

// RestoreResult is what a restore answers.
type RestoreResult struct {
	// Index is the log index at which every node installed the backup.
	Index uint64 `json:"index"`
	// BackupIndex is the applied index the backup held, SchemaVersion
	// its internal schema version (before the restore brought it to the
	// cluster's).
	BackupIndex   uint64 `json:"backup_index"`
	SchemaVersion int64  `json:"schema_version"`
	SHA256        string `json:"sha256"`
	Size          int64  `json:"size"`
	// Previous is where each node keeps the database the restore
	// replaced, relative to its data directory.
	Previous string `json:"previous"`
}

// Restore checks the database file read from r, copies it to the other
// nodes and installs it on every node at one log index. by is the admin
// who asks. A file that cannot be restored is a 422 naming why (details
// "file"); too few reachable nodes, a 503.
func (b *Backups) Restore(ctx context.Context, r io.Reader, by string) (*RestoreResult, uint64, error) {
	b.restoreMu.Lock()
	defer b.restoreMu.Unlock()
	u, err := b.receive(r)
	if err != nil {
		return nil, 0, err
	}
	defer os.Remove(u.path)
	src := filepath.Join(b.dir, sourceName(u.sha256))
	if err := os.Rename(u.path, src); err != nil {
		return nil, 0, fmt.Errorf("backup: %w", err)
	}
	syncDir(b.dir)
	if b.peers != nil {
		if err := b.peers.Push(ctx, sourceName(u.sha256), src); err != nil {
			if errors.Is(err, ErrNoMajority) {
				return nil, 0, &engine.Error{Kind: engine.KindUnavailable, RetryAfter: 5,
					Message: "Not enough nodes are reachable to restore the backup: " + err.Error()}
			}
			return nil, 0, err
		}
	}
	b.log.Info("restoring a backup", "sha256", u.sha256, "bytes", u.size, "backup_index", u.index, "schema_version", u.schemaVersion)
	v, idx, err := b.core.Propose(ctx, cmdRestore, restoreCmd{
		SHA256: u.sha256, Size: u.size, SchemaVersion: u.schemaVersion, BackupIndex: u.index, Now: b.core.Now().Unix(), By: by,
	})
	if err != nil {
		return nil, idx, err
	}
	res, _ := v.(*RestoreResult)
	return res, idx, nil
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
