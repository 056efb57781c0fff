package fsm

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"

	sqlite3 "github.com/mattn/go-sqlite3"
)

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
func (sn *Snapshot) WriteTo(w io.Writer) (int64, error) {
	tmp, err := os.CreateTemp(filepath.Dir(sn.store.opts.Path), "snapshot-*.db")
	if err != nil {
		return 0, fmt.Errorf("fsm: snapshot temp file: %w", err)
	}
	tmpPath := tmp.Name()
	tmp.Close()
	defer removeDBFiles(tmpPath)
	if err := sn.backupTo(tmpPath); err != nil {
		return 0, err
	}
	f, err := os.Open(tmpPath)
	if err != nil {
		return 0, fmt.Errorf("fsm: snapshot: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(w, h), f)
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
	if err != nil {
		return n, fmt.Errorf("fsm: write snapshot trailer: %w", err)
	}
	return n, nil
}

// backupTo copies the pinned state page by page into a new database file
// using SQLite's online backup, in one step inside the pinned transaction.
func (sn *Snapshot) backupTo(path string) error {
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
		if _, err := b.Step(-1); err != nil {
			b.Finish()
			return fmt.Errorf("fsm: snapshot backup step: %w", err)
		}
		return b.Finish()
	})
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
