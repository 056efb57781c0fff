package fsm

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	sqlite3 "github.com/mattn/go-sqlite3"

	"svcd/internal/progress"
)

// snapshotStepPages is how many pages one step of the online backup copies
// (4 MiB at SQLite's default page size): the unit of the copy's progress.
const snapshotStepPages = 1024

// Snapshot is a consistent point-in-time view of the database, pinned by a
// read transaction on one reader connection. Applies continue while it is
// written out (WAL readers do not block the writer).
type Snapshot struct {
	store *Store
	conn  *sql.Conn
	index uint64
	done  bool
}

// Snapshot pins the current state. Call it between applies (raft calls
// FSM.Snapshot on the apply goroutine); Persist may then run concurrently
// with later applies. Release must always be called.
func (s *Store) Snapshot() (*Snapshot, error) {
	s.mu.RLock()
	if s.pools == nil {
		s.mu.RUnlock()
		return nil, ErrClosed
	}
	ctx := context.Background()
	conn, err := s.pools.reader.Conn(ctx)
	if err != nil {
		s.mu.RUnlock()
		return nil, fmt.Errorf("fsm: snapshot: %w", err)
	}
	if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
		conn.Close()
		s.mu.RUnlock()
		return nil, fmt.Errorf("fsm: snapshot: %w", err)
	}
	// The first read opens the read transaction: from here on this
	// connection sees exactly the state as of now.
	var idx uint64
	if err := conn.QueryRowContext(ctx, `SELECT COALESCE((SELECT v FROM _svc_meta WHERE k = 'applied_index'), 0)`).Scan(&idx); err != nil {
		conn.ExecContext(ctx, "ROLLBACK")
		conn.Close()
		s.mu.RUnlock()
		return nil, fmt.Errorf("fsm: snapshot: %w", err)
	}
	return &Snapshot{store: s, conn: conn, index: idx}, nil
}

// Index is the applied index the snapshot contains.
func (sn *Snapshot) Index() uint64 { return sn.index }

// WriteTo writes the snapshot: a self-contained SQLite database file
// followed by its checksum trailer (snapshot_trailer.go), which Restore
// verifies. It returns the bytes written, the trailer included.
//
// It logs its progress in two phases, the copy of the pinned state into a
// temporary file and the write of that file to w, and a summary
// ("snapshot done", the bytes written).
func (sn *Snapshot) WriteTo(w io.Writer) (n int64, err error) {
	prog := progress.Log(sn.store.log, "snapshot", progress.Options{
		Interval: sn.store.opts.ProgressInterval, Attrs: []slog.Attr{slog.Uint64("index", sn.index)},
	})
	defer func() { prog.Finish(err) }()
	tmp, err := os.CreateTemp(filepath.Dir(sn.store.opts.Path), "snapshot-*.db")
	if err != nil {
		return 0, fmt.Errorf("fsm: snapshot temp file: %w", err)
	}
	tmpPath := tmp.Name()
	tmp.Close()
	defer removeDBFiles(tmpPath)
	prog.Phase("copy", progress.Options{Bytes: true})
	if err := sn.backupTo(tmpPath, prog); err != nil {
		return 0, err
	}
	f, err := os.Open(tmpPath)
	if err != nil {
		return 0, fmt.Errorf("fsm: snapshot: %w", err)
	}
	defer f.Close()
	var size int64
	if fi, err := f.Stat(); err == nil {
		size = fi.Size() + snapshotTrailerSize
	}
	prog.Phase("write", progress.Options{Bytes: true, TotalBytes: size})
	h := sha256.New()
	n, err = io.Copy(io.MultiWriter(w, h, progressWriter{prog}), f)
	if err != nil {
		return n, fmt.Errorf("fsm: write snapshot: %w", err)
	}
	if n%sqliteMinPageSize != 0 {
		// Restore would take the stream for a plain database file.
		return n, fmt.Errorf("fsm: write snapshot: the database copy is %d bytes, not a whole number of pages", n)
	}
	t := snapshotTrailer{length: uint64(n)}
	h.Sum(t.sum[:0])
	m, err := w.Write(t.encode())
	n += int64(m)
	prog.AddBytes(int64(m))
	if err != nil {
		return n, fmt.Errorf("fsm: write snapshot trailer: %w", err)
	}
	return n, nil
}

// backupTo copies the pinned state page by page into a new database file
// using SQLite's online backup, snapshotStepPages pages per step, every
// step inside the pinned read transaction (so the steps together copy one
// consistent state: SQLite restarts a backup only when the source changes
// under the reading connection, and the open transaction keeps it from
// seeing any change). prog counts the bytes copied.
func (sn *Snapshot) backupTo(path string, prog *progress.Reporter) error {
	var pageSize int64
	if err := sn.conn.QueryRowContext(context.Background(), "PRAGMA page_size").Scan(&pageSize); err != nil {
		return fmt.Errorf("fsm: snapshot: page size: %w", err)
	}
	drv := &sqlite3.SQLiteDriver{}
	dc, err := drv.Open(path)
	if err != nil {
		return fmt.Errorf("fsm: snapshot dest: %w", err)
	}
	dest := dc.(*sqlite3.SQLiteConn)
	defer dest.Close()
	return sn.conn.Raw(func(raw any) error {
		src, ok := raw.(*sqlite3.SQLiteConn)
		if !ok {
			return fmt.Errorf("fsm: snapshot: unexpected driver connection %T", raw)
		}
		b, err := dest.Backup("main", src, "main")
		if err != nil {
			return fmt.Errorf("fsm: snapshot backup: %w", err)
		}
		if err := stepBackup(b, pageSize, prog); err != nil {
			b.Finish()
			return err
		}
		return b.Finish()
	})
}

// backupStalled bounds the steps in a row that copy nothing (the
// destination busy or locked, which a private new file never is).
const backupStalled = 5 * time.Second

// stepBackup runs b to its end, snapshotStepPages pages at a time,
// counting the bytes copied.
func stepBackup(b *sqlite3.SQLiteBackup, pageSize int64, prog *progress.Reporter) error {
	remaining, since := -1, time.Now()
	for {
		done, err := b.Step(snapshotStepPages)
		if err != nil {
			return fmt.Errorf("fsm: snapshot backup step: %w", err)
		}
		total, left := b.PageCount(), b.Remaining()
		prog.SetTotalBytes(int64(total) * pageSize)
		prog.SetBytes(int64(total-left) * pageSize)
		if done {
			return nil
		}
		if left != remaining {
			remaining, since = left, time.Now()
			continue
		}
		// Busy or locked: the step copied nothing.
		if time.Since(since) > backupStalled {
			return fmt.Errorf("fsm: snapshot backup: no page copied for %s (%d of %d pages left)", backupStalled, left, total)
		}
		time.Sleep(time.Millisecond)
	}
}

// progressWriter counts the bytes written through it.
type progressWriter struct{ prog *progress.Reporter }

func (p progressWriter) Write(b []byte) (int, error) {
	p.prog.AddBytes(int64(len(b)))
	return len(b), nil
}

// Release ends the read transaction. Safe to call twice.
func (sn *Snapshot) Release() {
	if sn.done {
		return
	}
	sn.done = true
	sn.conn.ExecContext(context.Background(), "ROLLBACK")
	sn.conn.Close()
	sn.store.mu.RUnlock()
}
