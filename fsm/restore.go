package fsm

import (
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"svcd/internal/progress"
)

// Restore replaces the whole database with the SQLite file read from r (a
// snapshot written by Snapshot.WriteTo, or an uploaded backup). The new file
// is streamed beside the live one, its checksum trailer verified (a stream
// without one, from an older binary or a plain backup file, is checked by
// SQLite alone: snapshot_trailer.go) and SQLite's checks run, then it is
// swapped in while no reader or apply runs; the old WAL and shared-memory
// files are dropped. A stream that fails a check is refused with an error
// (wrapping ErrSnapshotDamaged for a checksum mismatch) and the live
// database stays as it was.
//
// It logs its progress ("database restore progress": the bytes received,
// against the size the database's header gives, then the check) and a
// summary ("database restore done", the applied index it restored).
func (s *Store) Restore(r io.Reader) (err error) {
	s.waitMu.Lock()
	closed := s.closed
	s.waitMu.Unlock()
	if closed {
		return ErrClosed
	}
	prog := progress.Log(s.log, "database restore", progress.Options{Interval: s.opts.ProgressInterval})
	defer func() {
		if err != nil {
			prog.Finish(err)
			return
		}
		prog.Finish(nil, slog.Uint64("index", s.AppliedIndex()))
	}()
	prog.Phase("receive", progress.Options{Bytes: true})
	tmpPath := s.opts.Path + ".restore"
	removeDBFiles(tmpPath)
	checked, err := receiveSnapshot(tmpPath, r, prog)
	if err != nil {
		removeDBFiles(tmpPath)
		return fmt.Errorf("fsm: restore: %w", err)
	}
	if !checked {
		s.log.Warn("restoring a database without a checksum trailer (an older snapshot or a plain backup file): SQLite's checks only")
	}
	prog.Phase("check", progress.Options{})
	if err := checkDatabase(tmpPath); err != nil {
		removeDBFiles(tmpPath)
		return fmt.Errorf("fsm: restore: not a usable database: %w", err)
	}
	os.Remove(tmpPath + "-wal")
	os.Remove(tmpPath + "-shm")

	s.mu.Lock()
	if s.pools != nil {
		if err := s.pools.close(); err != nil {
			s.log.Warn("closing database before restore", "err", err)
		}
		s.pools = nil
	}
	err = removeDBFiles(s.opts.Path)
	if err == nil {
		err = os.Rename(tmpPath, s.opts.Path)
	}
	if err == nil {
		syncDir(filepath.Dir(s.opts.Path))
		err = s.openPools(true)
	}
	s.mu.Unlock()
	if err != nil {
		// The old database is gone and the new one is not in place: apply
		// nothing until the node is restarted (it rebuilds its database
		// from its snapshot and log).
		s.enterStall(s.stallAt(s.AppliedIndex()+1, fmt.Errorf("restore swap: %w", err), false))
		return err
	}
	s.notify([]Event{{Index: s.AppliedIndex(), Kind: KindRestore}})
	return nil
}

// KindRestore is the event emitted after the database was replaced: every
// cache derived from it must be rebuilt.
const KindRestore = "restore"

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// checkDatabase opens path, runs SQLite's quick integrity check and
// requires the state machine's meta table: an empty or foreign file is not
// a snapshot of this service.
func checkDatabase(path string) error {
	db, err := sql.Open(driverName, dsn(path, true))
	if err != nil {
		return err
	}
	defer db.Close()
	var res string
	if err := db.QueryRow("PRAGMA quick_check").Scan(&res); err != nil {
		return err
	}
	if res != "ok" {
		return fmt.Errorf("quick_check: %s", res)
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = '_svc_meta'`).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("no _svc_meta table")
	}
	return nil
}
