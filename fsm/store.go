package fsm

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// Options configure a Store.
type Options struct {
	// Path of the SQLite database file.
	Path string
	// Registry of command handlers.
	Registry *Registry
	// Logger for apply-time problems.
	Logger *slog.Logger
	// OnStall, when set, is told when the replica stops applying at an
	// entry it cannot apply (stall.go); it runs on the apply goroutine.
	OnStall func(Stall)
	// ProgressInterval is the time between two progress lines of a
	// snapshot written (Snapshot.WriteTo) or restored (Restore); 0:
	// progress.DefaultInterval (5 s).
	ProgressInterval time.Duration
}

// Store is the state machine over one SQLite database: a single writer
// connection owned by the apply path and a pool of read-only connections.
type Store struct {
	opts Options
	log  *slog.Logger

	// mu guards the connection pools: readers hold it shared for the length
	// of a read, restore holds it exclusively while it swaps the file.
	mu    sync.RWMutex
	pools *pools

	applied  atomic.Uint64
	waitMu   sync.Mutex
	waitCh   chan struct{} // closed and replaced whenever applied advances
	closed   bool
	obsMu    sync.RWMutex
	observer []Observer
	stats    batchStats
	// stall is the stall in progress (nil while applying); closing is
	// closed by Close, ending the wait of a stalled apply.
	stall     atomic.Pointer[Stall]
	closing   chan struct{}
	closeOnce sync.Once
}

type pools struct {
	writer *writer
	reader *sql.DB
	rstmts *stmtCache
}

func (p *pools) close() error {
	p.rstmts.reset()
	return errors.Join(p.reader.Close(), p.writer.close())
}

// Open opens (creating if needed) the database at opts.Path.
func Open(opts Options) (*Store, error) {
	if opts.Registry == nil {
		opts.Registry = NewRegistry()
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if err := os.MkdirAll(filepath.Dir(opts.Path), 0o700); err != nil {
		return nil, fmt.Errorf("fsm: %w", err)
	}
	s := &Store{opts: opts, log: opts.Logger, waitCh: make(chan struct{}), closing: make(chan struct{})}
	if err := s.openPools(true); err != nil {
		return nil, err
	}
	return s, nil
}

// openPools opens the writer and the readers on the database file and
// takes its applied index; publish wakes the waiters on it (a replace
// leaves that to the observers' publication).
func (s *Store) openPools(publish bool) error {
	w, err := openWriter(s.opts.Path)
	if err != nil {
		return fmt.Errorf("fsm: open %s: %w", s.opts.Path, err)
	}
	var mode string
	if err := (&Row{rows: mustRows(w.query(false, "PRAGMA journal_mode", nil))}).Scan(&mode); err != nil || mode != "wal" {
		w.close()
		return fmt.Errorf("fsm: open %s: journal mode %q: %v", s.opts.Path, mode, err)
	}
	if _, err := w.exec(false, metaDDL, nil); err != nil {
		w.close()
		return fmt.Errorf("fsm: create meta table: %w", err)
	}
	var idx uint64
	err = (&Row{rows: mustRows(w.query(false, `SELECT v FROM _svc_meta WHERE k = 'applied_index'`, nil))}).Scan(&idx)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		w.close()
		return fmt.Errorf("fsm: read applied index: %w", err)
	}
	r, err := openReaders(s.opts.Path)
	if err != nil {
		w.close()
		return fmt.Errorf("fsm: %w", err)
	}
	p := &pools{writer: w, reader: r, rstmts: newStmtCache(r)}
	// SQLite creates its files with the process umask; the replica holds
	// password hashes and settings, so keep them private.
	for _, f := range []string{s.opts.Path, s.opts.Path + "-wal", s.opts.Path + "-shm"} {
		if err := os.Chmod(f, 0o600); err != nil && !errors.Is(err, os.ErrNotExist) {
			s.log.Warn("restrict database file mode", "file", f, "err", err)
		}
	}
	s.pools = p
	if publish {
		s.setApplied(idx)
	} else {
		s.applied.Store(idx)
	}
	return nil
}

const metaDDL = `CREATE TABLE IF NOT EXISTS _svc_meta (k TEXT PRIMARY KEY, v INTEGER NOT NULL) WITHOUT ROWID`

// mustRows adapts a query result for Row: an error surfaces at Scan.
func mustRows(r *Rows, err error) *Rows {
	if err != nil {
		return &Rows{err: err, done: true}
	}
	return r
}

// Path is the database file.
func (s *Store) Path() string { return s.opts.Path }

// Registry returns the handler table.
func (s *Store) Registry() *Registry { return s.opts.Registry }

// Knows reports whether this store's registry can apply cmd (Registry.Knows).
func (s *Store) Knows(cmd Command) bool { return s.opts.Registry.Knows(cmd) }

// Close closes the database. Applies after Close fail.
func (s *Store) Close() error {
	s.Interrupt()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.waitMu.Lock()
	s.closed = true
	close(s.waitCh)
	s.waitCh = make(chan struct{})
	s.waitMu.Unlock()
	if s.pools == nil {
		return nil
	}
	err := s.pools.close()
	s.pools = nil
	return err
}

// AppliedIndex is the log index of the last entry applied to this replica.
func (s *Store) AppliedIndex() uint64 { return s.applied.Load() }

func (s *Store) setApplied(idx uint64) {
	s.applied.Store(idx)
	s.waitMu.Lock()
	close(s.waitCh)
	s.waitCh = make(chan struct{})
	s.waitMu.Unlock()
}

// ErrClosed is returned by waits on a closed store.
var ErrClosed = errors.New("fsm: store closed")

// WaitApplied blocks until this replica has applied index idx, ctx ends or
// the store closes.
func (s *Store) WaitApplied(ctx context.Context, idx uint64) error {
	for {
		s.waitMu.Lock()
		ch, closed := s.waitCh, s.closed
		s.waitMu.Unlock()
		if s.applied.Load() >= idx {
			return nil
		}
		if closed {
			return ErrClosed
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Observe registers an observer of committed events.
func (s *Store) Observe(o Observer) {
	s.obsMu.Lock()
	s.observer = append(s.observer, o)
	s.obsMu.Unlock()
}

func (s *Store) notify(events []Event) {
	s.obsMu.RLock()
	obs := s.observer
	s.obsMu.RUnlock()
	for _, o := range obs {
		o(events)
	}
}
