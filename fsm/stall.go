package fsm

import (
	"errors"
	"fmt"
	"path/filepath"
	"syscall"
	"time"

	sqlite3 "github.com/mattn/go-sqlite3"
)

// A replica never skips an entry: skipping one it cannot apply would make
// it differ from the others from then on, silently. When an entry cannot
// be applied, ApplyBatch commits the entries before it and stops at it (a
// stall), and the consensus layer, whose apply goroutine is held there,
// sends it nothing further. The node stays up: it serves reads, its probes
// and its cluster view say why it stopped, and:
//
//   - when the cause is this node's environment (a full disk, an I/O error,
//     a file locked by another process), the batch is retried, every second
//     at first and at most every few seconds, and the node resumes by
//     itself once the cause is gone;
//   - when the entry itself cannot be applied (its checksum fails, its
//     type is unknown to this binary, or a handler refuses it with
//     ErrHalt), it waits until Close: the operator repairs the node (docs/
//     operations.md) or upgrades it, and the restarted node resumes from
//     that entry.

const (
	stallRetryMin = time.Second
	stallRetryMax = 5 * time.Second
)

// Stall describes why this replica stopped applying.
type Stall struct {
	// Index is the entry it stopped at: every entry before it is applied.
	Index uint64
	// Reason says why, and what fixes it.
	Reason string
	// Transient is set when the node retries by itself (the cause is its
	// environment); otherwise it waits for a repair or an upgrade.
	Transient bool
	// DiskFull is set when the cause is a full disk.
	DiskFull bool
	// Since is when it stopped.
	Since time.Time
}

// Stalled returns the stall in progress, or nil while the replica applies.
func (s *Store) Stalled() *Stall {
	return s.stall.Load()
}

// stallAt describes a stall at index for err, with what repairs it.
func (s *Store) stallAt(index uint64, err error, transient bool) *Stall {
	st := &Stall{Index: index, Transient: transient, DiskFull: diskFull(err), Since: time.Now()}
	dir := filepath.Dir(s.opts.Path)
	switch {
	case st.DiskFull:
		st.Reason = fmt.Sprintf("disk full: cannot apply entry %d (%v); applying resumes by itself when space is freed", index, err)
	case damagedDatabase(err):
		st.Reason = fmt.Sprintf("the database file is damaged: cannot apply entry %d (%v); stop the node and run "+
			"`svcd repair rebuild-db --dir %s` (docs/operations.md)", index, err, dir)
	case transient:
		st.Reason = fmt.Sprintf("cannot apply entry %d: %v; retrying", index, err)
	case errors.Is(err, ErrChecksum) || errors.Is(err, ErrBadEnvelope):
		st.Reason = fmt.Sprintf("stopped at entry %d: %v; this node applies nothing until it is repaired: stop it and run "+
			"`svcd repair reseed --dir %s` (a cluster member), or restore a backup (a single node); see docs/operations.md", index, err, dir)
	default:
		st.Reason = fmt.Sprintf("stopped at entry %d: %v; this node applies nothing until it is repaired or upgraded (docs/operations.md)", index, err)
	}
	return st
}

// damagedDatabase reports whether err is SQLite finding its file damaged.
func damagedDatabase(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && (se.Code == sqlite3.ErrCorrupt || se.Code == sqlite3.ErrNotADB)
}

// enterStall records st; the first report of a stall (or of a new cause)
// is logged and handed to OnStall.
func (s *Store) enterStall(st *Stall) {
	prev := s.stall.Load()
	if prev != nil && prev.Index == st.Index && prev.Reason == st.Reason {
		return
	}
	if prev != nil && prev.Index == st.Index {
		st.Since = prev.Since
	}
	s.stall.Store(st)
	s.log.Error("the state machine stopped applying", "index", st.Index, "reason", st.Reason, "retrying", st.Transient)
	if s.opts.OnStall != nil {
		s.opts.OnStall(*st)
	}
}

// leaveStall clears a stall once the entries it held are applied.
func (s *Store) leaveStall() {
	if prev := s.stall.Swap(nil); prev != nil {
		s.log.Info("the state machine applies again", "index", prev.Index, "stalled_for", time.Since(prev.Since).Round(time.Millisecond))
	}
}

// awaitRetry waits before the next attempt at a stalled batch: wait for a
// transient stall, until Close otherwise. It reports false once the store
// is closed.
func (s *Store) awaitRetry(st *Stall, wait time.Duration) bool {
	var timer <-chan time.Time
	if st.Transient {
		t := time.NewTimer(wait)
		defer t.Stop()
		timer = t.C
	}
	select {
	case <-s.closing:
		return false
	case <-timer:
		return true
	}
}

// Interrupt ends the wait of a stalled ApplyBatch and makes later ones
// answer ErrClosed without applying anything: the consensus layer calls it
// before it shuts down (its apply goroutine may be held at a stall). The
// database stays open for reads until Close.
func (s *Store) Interrupt() { s.closeOnce.Do(func() { close(s.closing) }) }

// isClosing reports whether Close has begun.
func (s *Store) isClosing() bool {
	select {
	case <-s.closing:
		return true
	default:
		return false
	}
}

// environmentError reports whether err is SQLite failing for a reason of
// this node's, not of the command: a full disk, an I/O error, memory, a
// damaged or locked database file. Such an error must never become a
// command's answer, since other replicas apply the same command fine.
func environmentError(err error) bool {
	var se sqlite3.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code {
	case sqlite3.ErrFull, sqlite3.ErrIoErr, sqlite3.ErrNomem, sqlite3.ErrCorrupt, sqlite3.ErrNotADB,
		sqlite3.ErrCantOpen, sqlite3.ErrReadonly, sqlite3.ErrBusy, sqlite3.ErrLocked, sqlite3.ErrProtocol,
		sqlite3.ErrPerm, sqlite3.ErrAuth:
		return true
	}
	return false
}

// diskFull reports whether err is SQLite's full disk (or a write that
// failed for want of space).
func diskFull(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && (se.Code == sqlite3.ErrFull || se.SystemErrno == syscall.ENOSPC)
}
