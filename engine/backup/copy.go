package backup

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"svcd/fsm"
)

// Copy is a consistent copy of this node's database in a temporary file,
// ready to be sent: a plain SQLite file, the whole state at one applied
// index. Remove it when done.
type Copy struct {
	// Path is the file.
	Path string
	// Index is the applied index it holds; SchemaVersion its internal
	// schema version.
	Index         uint64
	SchemaVersion int64
	// Size in bytes and SHA-256 (hex) of the file.
	Size   int64
	SHA256 string
	// Pinned is how long the copy held its read transaction; Took how
	// long the copy took in all (the checksum included).
	Pinned, Took time.Duration
	// At is when it was taken.
	At time.Time
}

// Open opens the copy for reading.
func (c *Copy) Open() (*os.File, error) { return os.Open(c.Path) }

// Remove deletes the file.
func (c *Copy) Remove() { os.Remove(c.Path) }

// Take copies this node's database into a temporary file of Dir, from a
// read transaction: applies go on meanwhile (fsm.Store.CopyTo).
func (b *Backups) Take() (*Copy, error) {
	start := b.core.Now()
	f, err := os.CreateTemp(b.dir, copyPrefix+"*.db")
	if err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	path := f.Name()
	f.Close()
	info, err := b.core.Store().CopyTo(path)
	if err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("backup: copy: %w", err)
	}
	meta, err := fsm.ReadMeta(path)
	if err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("backup: %w", err)
	}
	sum, err := fileSHA256(path)
	if err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("backup: %w", err)
	}
	return &Copy{Path: path, Index: info.Index, SchemaVersion: meta["schema_version"], Size: info.Size, SHA256: sum,
		Pinned: info.Pinned, Took: b.core.Now().Sub(start), At: start}, nil
}

// Name is the file name a copy is offered under:
// svcd-backup-<UTC time>-i<index>.db.
func (c *Copy) Name() string {
	return fmt.Sprintf("%s%s-i%d.db", NamePrefix, c.At.UTC().Format("20060102T150405Z"), c.Index)
}

// NamePrefix starts the name of every backup file the service writes; the
// retention of scheduled backups considers these names only.
const NamePrefix = "svcd-backup-"

// fileSHA256 is the hex SHA-256 of the file at path.
func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// relName is path relative to Dir's parent (the data directory), for
// answers and logs.
func (b *Backups) relName(path string) string {
	if rel, err := filepath.Rel(filepath.Dir(b.dir), path); err == nil {
		return rel
	}
	return path
}
