package fsm

import (
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"time"

	sqlite3 "github.com/mattn/go-sqlite3"

	"svcd/internal/progress"
)

// A backup is a consistent copy of the replica as one plain SQLite file:
// the state at one applied index, taken while applies go on. It is a
// snapshot's copy phase alone: a read transaction pins the state (WAL
// readers do not block the writer) and SQLite's online backup copies it
// page by page into a new file; the pin is released as soon as the file
// is written, before anyone reads it, so a slow client downloading the
// copy holds nothing of the database.

// CopyInfo describes a copy written by CopyTo.
type CopyInfo struct {
	// Index is the applied index of the state copied.
	Index uint64
	// Size is the file's size in bytes.
	Size int64
	// Pinned is how long the read transaction was held.
	Pinned time.Duration
}

// CopyTo writes a consistent copy of the database to a new file at path
// (an existing file there is replaced). It logs its progress as a
// snapshot's copy phase does.
func (s *Store) CopyTo(path string) (info CopyInfo, err error) {
	start := time.Now()
	sn, err := s.Snapshot()
	if err != nil {
		return CopyInfo{}, err
	}
	defer sn.Release()
	prog := progress.Log(s.log, "database copy", progress.Options{
		Interval: s.opts.ProgressInterval, Bytes: true, Attrs: []slog.Attr{slog.Uint64("index", sn.index)},
	})
	defer func() { prog.Finish(err) }()
	removeDBFiles(path)
	if err := sn.backupTo(path, prog); err != nil {
		removeDBFiles(path)
		return CopyInfo{}, err
	}
	sn.Release()
	info = CopyInfo{Index: sn.index, Pinned: time.Since(start)}
	// The copy is a file of its own, in rollback-journal mode: a reader
	// (sqlite3, a check) creates no -wal or -shm beside it.
	if err := standalone(path); err != nil {
		removeDBFiles(path)
		return CopyInfo{}, fmt.Errorf("fsm: copy: %w", err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return CopyInfo{}, fmt.Errorf("fsm: copy: %w", err)
	}
	info.Size = fi.Size()
	return info, nil
}

// standalone switches the database file at path (used by nobody else) to
// the rollback journal, leaving no -wal or -shm file.
func standalone(path string) error {
	dc, err := (&sqlite3.SQLiteDriver{}).Open("file:" + url.PathEscape(path))
	if err != nil {
		return err
	}
	c := dc.(*sqlite3.SQLiteConn)
	_, err = c.Exec("PRAGMA journal_mode=DELETE", nil)
	if cerr := c.Close(); err == nil {
		err = cerr
	}
	os.Remove(path + "-wal")
	os.Remove(path + "-shm")
	return err
}
