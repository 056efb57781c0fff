package fsm

import (
	"errors"
	"fmt"
	"runtime/debug"
)

// Entry is one committed log entry handed to the state machine.
type Entry struct {
	Index uint64
	// Data is an encoded Command; empty for a membership entry, which only
	// advances the applied index.
	Data []byte
	// Membership marks a configuration entry of the consensus layer.
	Membership bool
}

// Result is the outcome of one entry.
type Result struct {
	Value any
	Err   error
	// Skipped is set for an entry at or below the applied index (a replay
	// after restart) and for an unknown type carrying FlagIgnoreUnknown.
	Skipped bool
}

// ErrHalt, wrapped in a handler's error, stops the node: the handler met a
// command this binary cannot apply faithfully (for example a schema version
// newer than it knows), and skipping it would make this replica diverge.
var ErrHalt = errors.New("fsm: cannot apply, node must stop")

// ErrUnknownCommand marks a command type this node does not know.
var ErrUnknownCommand = errors.New("fsm: unknown command type")

// ApplyBatch applies committed entries in order inside one SQLite
// transaction. Each command runs under its own savepoint, so a failing
// command rolls back alone; the applied index is written in the same
// transaction, so an entry replayed after a crash is skipped.
func (s *Store) ApplyBatch(entries []Entry) []Result {
	if len(entries) == 0 {
		return nil
	}
	results, events, last := s.applyBatch(entries)
	// Observers run outside the lock (they may read the replica) but before
	// waiters on these indexes wake, so a reader released by WaitApplied sees
	// every cache the observers rebuilt.
	if len(events) > 0 {
		s.notify(events)
	}
	if last > s.applied.Load() {
		s.setApplied(last)
	}
	return results
}

func (s *Store) applyBatch(entries []Entry) ([]Result, []Event, uint64) {
	results := make([]Result, len(entries))
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.pools == nil {
		for i := range results {
			results[i].Err = ErrClosed
		}
		return results, nil, 0
	}
	applied := s.applied.Load()
	last := applied
	w := s.pools.writer
	if _, err := w.exec(true, "BEGIN IMMEDIATE", nil); err != nil {
		s.fatal(fmt.Errorf("fsm: begin batch at index %d: %w", entries[0].Index, err))
		return failAll(results, err), nil, 0
	}
	rollback := func() { w.exec(true, "ROLLBACK", nil) }
	tx := &Tx{w: w}
	commands := 0
	// First try the batch without savepoints: commands rarely fail at apply
	// time, and two statements fewer per command is most of the apply cost
	// of a small write. If any command fails, the whole attempt is rolled
	// back and the batch runs again with a savepoint per command; handlers
	// are deterministic, so the second run sees and does exactly what a
	// savepoint-only run would have.
	if !s.applyFast(tx, entries, applied, results) {
		rollback()
		if _, err := w.exec(true, "BEGIN IMMEDIATE", nil); err != nil {
			s.fatal(fmt.Errorf("fsm: begin batch at index %d: %w", entries[0].Index, err))
			return failAll(results, err), nil, 0
		}
		tx = &Tx{w: w}
		for i, e := range entries {
			if e.Index <= applied || e.Membership || len(e.Data) == 0 {
				continue
			}
			results[i] = s.applyOne(tx, e)
		}
	}
	for i, e := range entries {
		if e.Index <= applied {
			results[i].Skipped = true
			continue
		}
		last = e.Index
		if !e.Membership && len(e.Data) > 0 {
			commands++
		}
	}
	if last == applied {
		rollback()
		return results, nil, 0
	}
	if _, err := tx.Exec(`INSERT INTO _svc_meta (k, v) VALUES ('applied_index', ?)
		ON CONFLICT (k) DO UPDATE SET v = excluded.v`, int64(last)); err != nil {
		rollback()
		s.fatal(fmt.Errorf("fsm: record applied index %d: %w", last, err))
		return failAll(results, err), nil, 0
	}
	if _, err := w.exec(true, "COMMIT", nil); err != nil {
		rollback()
		s.fatal(fmt.Errorf("fsm: commit batch ending at index %d: %w", last, err))
		return failAll(results, err), nil, 0
	}
	s.stats.record(commands)
	return results, tx.events, last
}

// applyFast applies the batch's commands with no savepoints. It reports
// false, leaving the transaction to be rolled back, at the first command
// that does not apply cleanly (an error, a panic, an unknown type or a bad
// envelope); the savepoint path then handles that command properly.
func (s *Store) applyFast(tx *Tx, entries []Entry, applied uint64, results []Result) bool {
	for i, e := range entries {
		if e.Index <= applied || e.Membership || len(e.Data) == 0 {
			continue
		}
		cmd, err := Decode(e.Data)
		if err != nil {
			return false
		}
		h, ok := s.opts.Registry.lookup(cmd.Type)
		if !ok {
			return false
		}
		tx.index = e.Index
		v, panicked, err := callHandler(h, tx, cmd)
		if err != nil || panicked {
			return false
		}
		results[i] = Result{Value: v}
	}
	return true
}

// callHandler runs h, turning a panic into panicked.
func callHandler(h Handler, tx *Tx, cmd Command) (v any, panicked bool, err error) {
	defer func() {
		if p := recover(); p != nil {
			v, panicked, err = nil, true, nil
		}
	}()
	v, err = h(tx, cmd)
	return v, false, err
}

// applyOne runs one command under a savepoint.
func (s *Store) applyOne(tx *Tx, e Entry) (res Result) {
	cmd, err := Decode(e.Data)
	if err != nil {
		s.fatal(fmt.Errorf("fsm: entry %d: %w", e.Index, err))
		return Result{Err: err}
	}
	h, ok := s.opts.Registry.lookup(cmd.Type)
	if !ok {
		if cmd.Flags&FlagIgnoreUnknown != 0 {
			s.log.Warn("skipping unknown command type", "type", cmd.Type, "index", e.Index)
			return Result{Skipped: true, Err: ErrUnknownCommand}
		}
		err := fmt.Errorf("%w %d at index %d (upgrade this node)", ErrUnknownCommand, cmd.Type, e.Index)
		s.fatal(err)
		return Result{Err: err}
	}
	tx.index = e.Index
	mark := len(tx.events)
	if _, err := tx.w.exec(true, "SAVEPOINT cmd", nil); err != nil {
		s.fatal(fmt.Errorf("fsm: savepoint at index %d: %w", e.Index, err))
		return Result{Err: err}
	}
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("command handler panicked", "type", s.opts.Registry.Name(cmd.Type),
				"index", e.Index, "panic", p, "stack", string(debug.Stack()))
			res = Result{Err: fmt.Errorf("fsm: %s handler failed at index %d", s.opts.Registry.Name(cmd.Type), e.Index)}
		}
		if res.Err != nil {
			tx.events = tx.events[:mark]
			if _, err := tx.w.exec(true, "ROLLBACK TO cmd", nil); err != nil {
				s.fatal(fmt.Errorf("fsm: rollback to savepoint at index %d: %w", e.Index, err))
			}
		}
		if _, err := tx.w.exec(true, "RELEASE cmd", nil); err != nil {
			s.fatal(fmt.Errorf("fsm: release savepoint at index %d: %w", e.Index, err))
		}
	}()
	v, err := h(tx, cmd)
	if errors.Is(err, ErrHalt) {
		s.fatal(fmt.Errorf("fsm: %s at index %d: %w", s.opts.Registry.Name(cmd.Type), e.Index, err))
	}
	return Result{Value: v, Err: err}
}

func (s *Store) fatal(err error) {
	s.log.Error("state machine cannot continue", "err", err)
	s.opts.OnFatal(err)
}

func failAll(results []Result, err error) []Result {
	for i := range results {
		if !results[i].Skipped {
			results[i] = Result{Err: err}
		}
	}
	return results
}
