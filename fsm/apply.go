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
//
// It never skips an entry it cannot apply (stall.go): the entries before
// it are committed, and the call waits at it, retrying by itself when the
// cause is the environment (a full disk, an I/O error, a locked file), or
// until Close when the entry itself cannot be applied (damaged, of an
// unknown type, or one this binary must not apply). Entries after Close
// answer ErrClosed.
func (s *Store) ApplyBatch(entries []Entry) []Result {
	if len(entries) == 0 {
		return nil
	}
	out := make([]Result, len(entries))
	done := 0
	wait := stallRetryMin
	for done < len(entries) {
		if s.isClosing() {
			for i := done; i < len(entries); i++ {
				out[i] = Result{Err: ErrClosed}
			}
			return out
		}
		o := s.applyNext(entries[done:])
		copy(out[done:], o.results[:o.applied])
		s.publish(o)
		done += o.applied
		if o.stall == nil {
			continue
		}
		s.enterStall(o.stall)
		if !s.awaitRetry(o.stall, wait) {
			for i := done; i < len(entries); i++ {
				out[i] = Result{Err: ErrClosed}
			}
			return out
		}
		wait = min(2*wait, stallRetryMax)
	}
	s.leaveStall()
	return out
}

// applyNext applies the first entries: a replace command on its own
// (replace.go), else the entries before the next one.
func (s *Store) applyNext(entries []Entry) batchOutcome {
	if e := entries[0]; e.Index > s.applied.Load() {
		if h, cmd, ok := s.opts.Registry.replaceHandler(e); ok {
			return s.applyReplace(e, h, cmd)
		}
	}
	return s.applyBatch(entries)
}

// publish runs the observers of an applied prefix and publishes its index.
// Observers run outside the lock (they may read the replica) but before
// waiters on these indexes wake, so a reader released by WaitApplied sees
// every cache the observers rebuilt.
func (s *Store) publish(o batchOutcome) {
	if len(o.events) > 0 {
		s.notify(o.events)
	}
	if o.last > s.applied.Load() || (o.replaced && o.last > 0) {
		// A replace stored its index without waking anyone (replace.go).
		s.setApplied(o.last)
	}
}

// batchOutcome is what one attempt at a batch did: the results and events
// of the entries it applied (the first applied of them; all of them
// unless it stalled), the last index it committed (0: none), and the
// stall that stopped it.
type batchOutcome struct {
	// replaced is set when the entry replaced the database.
	replaced bool
	results  []Result
	events   []Event
	last     uint64
	applied  int
	stall    *Stall
}

// applyBatch applies entries, or the prefix before the first one that
// cannot be applied, in one transaction.
func (s *Store) applyBatch(entries []Entry) batchOutcome {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.pools == nil {
		return batchOutcome{results: make([]Result, len(entries)),
			stall: s.stallAt(entries[0].Index, errors.New("the database was lost in a failed restore: restart the node"), false)}
	}
	applied := s.applied.Load()
	end, stop := len(entries), error(nil)
	if k, err := s.firstUnappliable(entries, applied); err != nil {
		end, stop = k, err
	}
	if k := s.firstReplace(entries[:end], applied); k >= 0 {
		// A replace command runs on its own, after these (applyNext).
		end, stop = k, nil
	}
	for {
		a := s.applyLocked(entries[:end], applied)
		if a.halt >= 0 {
			// A handler refused to apply a command faithfully: apply what
			// comes before it, stop at it.
			end, stop = a.halt, a.haltErr
			continue
		}
		o := a.batchOutcome
		if o.stall == nil && stop != nil {
			o.stall = s.stallAt(entries[end].Index, stop, false)
		}
		o.results = append(o.results, make([]Result, len(entries)-len(o.results))...)
		return o
	}
}

// firstUnappliable finds the first entry above applied that this node can
// never apply as it is: a damaged or malformed envelope, or an unknown
// type without the ignore bit. It returns its position and why.
func (s *Store) firstUnappliable(entries []Entry, applied uint64) (int, error) {
	for i, e := range entries {
		if e.Index <= applied || e.Membership || len(e.Data) == 0 {
			continue
		}
		cmd, err := Decode(e.Data)
		if err != nil {
			return i, fmt.Errorf("entry %d is damaged: %w", e.Index, err)
		}
		if _, ok := s.opts.Registry.lookup(cmd.Type); !ok && cmd.Flags&FlagIgnoreUnknown == 0 {
			return i, fmt.Errorf("%w %d at index %d (upgrade this node)", ErrUnknownCommand, cmd.Type, e.Index)
		}
	}
	return -1, nil
}

// attempt is one transaction over a run of entries; halt >= 0 names the
// entry whose handler returned ErrHalt (the transaction is rolled back).
type attempt struct {
	batchOutcome
	halt    int
	haltErr error
}

// applyLocked applies entries (all of which can be decoded) in one
// transaction. A failure of the environment (begin, commit, or a
// statement failing for a reason that is this node's, not the command's)
// rolls everything back and stalls at the first entry.
func (s *Store) applyLocked(entries []Entry, applied uint64) attempt {
	a := attempt{batchOutcome: batchOutcome{results: make([]Result, len(entries))}, halt: -1}
	if len(entries) == 0 {
		return a
	}
	envStall := func(what string, err error) attempt {
		s.stats.noteError(err)
		s.pools.writer.exec(true, "ROLLBACK", nil)
		return attempt{batchOutcome: batchOutcome{results: make([]Result, len(entries)),
			stall: s.stallAt(entries[0].Index, fmt.Errorf("%s: %w", what, err), true)}, halt: -1}
	}
	w := s.pools.writer
	if _, err := w.exec(true, "BEGIN IMMEDIATE", nil); err != nil {
		return envStall("begin batch", err)
	}
	tx := &Tx{w: w}
	commands := 0
	// First try the batch without savepoints: commands rarely fail at apply
	// time, and two statements fewer per command is most of the apply cost
	// of a small write. If any command fails, the whole attempt is rolled
	// back and the batch runs again with a savepoint per command; handlers
	// are deterministic, so the second run sees and does exactly what a
	// savepoint-only run would have.
	if !s.applyFast(tx, entries, applied, a.results) {
		w.exec(true, "ROLLBACK", nil)
		if _, err := w.exec(true, "BEGIN IMMEDIATE", nil); err != nil {
			return envStall("begin batch", err)
		}
		tx = &Tx{w: w}
		for i, e := range entries {
			if e.Index <= applied || e.Membership || len(e.Data) == 0 {
				continue
			}
			r, fail := s.applyOne(tx, e)
			switch {
			case fail != nil && errors.Is(fail, ErrHalt):
				w.exec(true, "ROLLBACK", nil)
				a.halt, a.haltErr = i, fail
				return a
			case fail != nil:
				return envStall(fmt.Sprintf("apply entry %d", e.Index), fail)
			}
			a.results[i] = r
		}
	}
	last := applied
	for i, e := range entries {
		if e.Index <= applied {
			a.results[i].Skipped = true
			continue
		}
		last = e.Index
		if !e.Membership && len(e.Data) > 0 {
			commands++
		}
	}
	a.applied = len(entries)
	if last == applied {
		w.exec(true, "ROLLBACK", nil)
		return a
	}
	if _, err := tx.Exec(`INSERT INTO _svc_meta (k, v) VALUES ('applied_index', ?)
		ON CONFLICT (k) DO UPDATE SET v = excluded.v`, int64(last)); err != nil {
		return envStall(fmt.Sprintf("record applied index %d", last), err)
	}
	if _, err := w.exec(true, "COMMIT", nil); err != nil {
		return envStall(fmt.Sprintf("commit batch ending at index %d", last), err)
	}
	s.stats.record(commands)
	a.events, a.last = tx.events, last
	return a
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

// applyOne runs one command under a savepoint. fail is set when the
// command must not be answered at all: a handler's ErrHalt, or a failure
// of this node's environment (the command's own error is res.Err). The
// envelope was checked by firstUnappliable.
func (s *Store) applyOne(tx *Tx, e Entry) (res Result, fail error) {
	cmd, _ := Decode(e.Data)
	h, ok := s.opts.Registry.lookup(cmd.Type)
	if !ok {
		s.log.Warn("skipping unknown command type", "type", cmd.Type, "index", e.Index)
		return Result{Skipped: true, Err: ErrUnknownCommand}, nil
	}
	tx.index = e.Index
	mark := len(tx.events)
	if _, err := tx.w.exec(true, "SAVEPOINT cmd", nil); err != nil {
		return Result{}, fmt.Errorf("savepoint: %w", err)
	}
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("command handler panicked", "type", s.opts.Registry.Name(cmd.Type),
				"index", e.Index, "panic", p, "stack", string(debug.Stack()))
			res = Result{Err: fmt.Errorf("fsm: %s handler failed at index %d", s.opts.Registry.Name(cmd.Type), e.Index)}
		}
		if res.Err != nil || fail != nil {
			tx.events = tx.events[:mark]
			if _, err := tx.w.exec(true, "ROLLBACK TO cmd", nil); err != nil && fail == nil {
				fail = fmt.Errorf("rollback to savepoint: %w", err)
			}
		}
		if _, err := tx.w.exec(true, "RELEASE cmd", nil); err != nil && fail == nil {
			fail = fmt.Errorf("release savepoint: %w", err)
		}
	}()
	v, err := h(tx, cmd)
	switch {
	case errors.Is(err, ErrHalt):
		return Result{}, fmt.Errorf("fsm: %s at index %d: %w", s.opts.Registry.Name(cmd.Type), e.Index, err)
	case environmentError(err):
		// Not the command's outcome but this node's: answering it would
		// make this replica differ from the others.
		return Result{}, err
	}
	return Result{Value: v, Err: err}, nil
}
