package fsm

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// A replace command installs a whole database in place of the replica's at
// one log index: every node applies it at the same index, so the cluster
// moves to the new state together (an administrator's restore of a backup).
// The file itself is not in the log: the handler names a file that is on
// this node's disk already (the engine copies it to every node before it
// proposes the command, and fetches it at apply time when this node was
// away). Applying it:
//
//  1. the handler resolves the command to a Replacement (or says the file
//     has not arrived yet: ErrNotReady, a transient stall retried until it
//     has);
//  2. the current database is copied aside (Replacement.Aside) from a read
//     transaction, the way a snapshot is;
//  3. the source is copied beside the live database, the copy aside is
//     attached to it as schema "prev", and Replacement.Prepare runs in one
//     transaction on the copy, with the applied index recorded in it;
//  4. the prepared copy is checked (quick_check) and swapped in as
//     Restore does, and one KindRestore event with Data *Replaced tells
//     the observers that everything changed.
//
// Every step reads only the log's state (the current database, the same
// at this index on every node) and a file identified by the command, so
// the result is identical on every node. A crash before the swap replays
// the command (the live database has not recorded its index); after it,
// the new database has, so the command is skipped.

// ErrNotReady, wrapped by a ReplaceHandler's error, means this node cannot
// apply the command yet for a reason of its own (the file it installs has
// not arrived): the replica stalls at the entry and retries it, every few
// seconds, until it can.
var ErrNotReady = errors.New("fsm: not ready to apply")

// Replacement says how a replace command installs a database.
type Replacement struct {
	// Source is the SQLite file to install. It is copied, never changed.
	Source string
	// Aside is where the current database is copied before it is
	// replaced (the copy stays there; the caller owns it).
	Aside string
	// Prepare runs in one transaction on the copy of Source before it is
	// swapped in, with the current database (its copy aside) attached as
	// schema "prev". It must be deterministic, as a handler is. An error
	// fails the command and nothing is replaced.
	Prepare func(tx *Tx) error
	// Result is the command's result (see Handler).
	Result any
}

// ReplaceHandler resolves a replace command applied at index to its
// Replacement. An error wrapping ErrNotReady stalls the replica (retried);
// ErrHalt stops it; any other error is the command's answer, on every
// node, and nothing is replaced.
type ReplaceHandler func(cmd Command, index uint64) (Replacement, error)

// Replaced is the Data of the KindRestore event a replace command emits
// (a snapshot installed from the leader emits one with no Data): the
// state changed in a way no event described, backwards in time perhaps,
// and clients that keep a copy must fetch it again.
type Replaced struct {
	// Name is the command's registered name.
	Name string
}

// RegisterReplace adds the replace handler of t. Registering a type twice
// (as a handler or a replace handler) is a wiring bug and panics.
func (r *Registry) RegisterReplace(t Type, name string, h ReplaceHandler) {
	r.Register(t, name, func(*Tx, Command) (any, error) {
		// Never called: ApplyBatch applies a replace command on its own.
		return nil, fmt.Errorf("fsm: %s is a replace command", name)
	})
	if r.replacers == nil {
		r.replacers = map[Type]ReplaceHandler{}
	}
	r.replacers[t] = h
}

// replaceHandler returns the replace handler of an entry's command, if it
// is one.
func (r *Registry) replaceHandler(e Entry) (ReplaceHandler, Command, bool) {
	if e.Membership || len(e.Data) == 0 || len(r.replacers) == 0 {
		return nil, Command{}, false
	}
	cmd, err := Decode(e.Data)
	if err != nil {
		return nil, Command{}, false
	}
	h, ok := r.replacers[cmd.Type]
	return h, cmd, ok
}

// firstReplace is the position of the first replace command above applied
// in entries, or -1.
func (s *Store) firstReplace(entries []Entry, applied uint64) int {
	for i, e := range entries {
		if e.Index <= applied {
			continue
		}
		if _, _, ok := s.opts.Registry.replaceHandler(e); ok {
			return i
		}
	}
	return -1
}

// replaceDBSuffix names the prepared copy beside the live database.
const replaceDBSuffix = ".replace"

// applyReplace applies the replace command of entry e (above the applied
// index) on its own: it never shares a transaction with other entries.
func (s *Store) applyReplace(e Entry, h ReplaceHandler, cmd Command) batchOutcome {
	stall := func(err error, transient bool) batchOutcome {
		return batchOutcome{results: []Result{{}}, stall: s.stallAt(e.Index, err, transient)}
	}
	rep, err := h(cmd, e.Index)
	switch {
	case errors.Is(err, ErrNotReady):
		return stall(err, true)
	case errors.Is(err, ErrHalt):
		return stall(fmt.Errorf("%s at index %d: %w", s.opts.Registry.Name(cmd.Type), e.Index, err), false)
	case err != nil:
		return s.failReplace(e, err)
	}
	tmp := s.opts.Path + replaceDBSuffix
	removeDBFiles(tmp)
	if err := s.copyAside(rep.Aside); err != nil {
		return stall(fmt.Errorf("copy the database aside: %w", err), true)
	}
	if err := copyFile(rep.Source, tmp); err != nil {
		removeDBFiles(tmp)
		if errors.Is(err, os.ErrNotExist) {
			return stall(fmt.Errorf("%w: %v", ErrNotReady, err), true)
		}
		return stall(fmt.Errorf("copy the new database: %w", err), true)
	}
	if err := prepareReplacement(tmp, rep, e.Index); err != nil {
		removeDBFiles(tmp)
		if environmentError(err) {
			return stall(fmt.Errorf("prepare the new database: %w", err), true)
		}
		return s.failReplace(e, err)
	}
	if err := checkDatabase(tmp); err != nil {
		removeDBFiles(tmp)
		return s.failReplace(e, fmt.Errorf("the new database fails its check: %w", err))
	}
	os.Remove(tmp + "-wal")
	os.Remove(tmp + "-shm")
	if err := s.swapIn(tmp); err != nil {
		return stall(fmt.Errorf("swap the new database in: %w", err), false)
	}
	s.log.Info("database replaced", "command", s.opts.Registry.Name(cmd.Type), "index", e.Index, "aside", rep.Aside)
	return batchOutcome{
		results: []Result{{Value: rep.Result}},
		events:  []Event{{Index: e.Index, Kind: KindRestore, Data: &Replaced{Name: s.opts.Registry.Name(cmd.Type)}}},
		last:    e.Index, applied: 1, replaced: true,
	}
}

// failReplace answers err for a replace command that replaces nothing, and
// records its index in the live database so that it is not applied again.
func (s *Store) failReplace(e Entry, cause error) batchOutcome {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.pools == nil {
		return batchOutcome{results: []Result{{}}, stall: s.stallAt(e.Index, errors.New("the database was lost in a failed restore: restart the node"), false)}
	}
	w := s.pools.writer
	if _, err := w.exec(true, "BEGIN IMMEDIATE", nil); err != nil {
		return batchOutcome{results: []Result{{}}, stall: s.stallAt(e.Index, fmt.Errorf("begin: %w", err), true)}
	}
	_, err := w.exec(true, `INSERT INTO _svc_meta (k, v) VALUES ('applied_index', ?)
		ON CONFLICT (k) DO UPDATE SET v = excluded.v`, []any{int64(e.Index)})
	if err == nil {
		_, err = w.exec(true, "COMMIT", nil)
	}
	if err != nil {
		w.exec(true, "ROLLBACK", nil)
		return batchOutcome{results: []Result{{}}, stall: s.stallAt(e.Index, fmt.Errorf("record applied index %d: %w", e.Index, err), true)}
	}
	return batchOutcome{results: []Result{{Err: cause}}, last: e.Index, applied: 1}
}

// copyAside copies the current database to path (through a temporary file
// renamed when complete) from a read transaction.
func (s *Store) copyAside(path string) error {
	if path == "" {
		return errors.New("no path for the copy of the current database")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	part := path + ".part"
	removeDBFiles(part)
	if _, err := s.CopyTo(part); err != nil {
		removeDBFiles(part)
		return err
	}
	if err := os.Rename(part, path); err != nil {
		removeDBFiles(part)
		return err
	}
	syncDir(filepath.Dir(path))
	return nil
}

// prepareReplacement runs rep.Prepare on the database at path, with
// rep.Aside attached as "prev", and records index as its applied index,
// in one transaction; then it closes the file (its WAL checkpointed).
func prepareReplacement(path string, rep Replacement, index uint64) (err error) {
	w, err := openWriter(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := w.close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	if _, err := w.exec(false, metaDDL, nil); err != nil {
		return err
	}
	if _, err := w.exec(false, "ATTACH DATABASE ? AS prev", []any{rep.Aside}); err != nil {
		return fmt.Errorf("attach the current database: %w", err)
	}
	defer w.exec(false, "DETACH DATABASE prev", nil)
	if _, err := w.exec(false, "BEGIN IMMEDIATE", nil); err != nil {
		return err
	}
	tx := &Tx{w: w, index: index}
	if rep.Prepare != nil {
		if err := rep.Prepare(tx); err != nil {
			w.exec(false, "ROLLBACK", nil)
			return err
		}
	}
	if _, err := tx.Exec(`INSERT INTO _svc_meta (k, v) VALUES ('applied_index', ?)
		ON CONFLICT (k) DO UPDATE SET v = excluded.v`, int64(index)); err != nil {
		w.exec(false, "ROLLBACK", nil)
		return err
	}
	if _, err := w.exec(false, "COMMIT", nil); err != nil {
		w.exec(false, "ROLLBACK", nil)
		return err
	}
	w.resetStmts()
	if _, err := w.exec(false, "DETACH DATABASE prev", nil); err != nil {
		return err
	}
	_, err = w.exec(false, "PRAGMA wal_checkpoint(TRUNCATE)", nil)
	return err
}

// swapIn replaces the live database with the prepared file at tmp while no
// reader or apply runs, and reopens it.
func (s *Store) swapIn(tmp string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pools != nil {
		if err := s.pools.close(); err != nil {
			s.log.Warn("closing database before a replace", "err", err)
		}
		s.pools = nil
	}
	err := removeDBFiles(s.opts.Path)
	if err == nil {
		err = os.Rename(tmp, s.opts.Path)
	}
	if err == nil {
		syncDir(filepath.Dir(s.opts.Path))
		err = s.openPools(false)
	}
	return err
}

// copyFile copies src to a new file dst and syncs it.
func copyFile(src, dst string) (err error) {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := out.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	if _, err := io.Copy(out, in); err != nil {
		return err
	}
	return out.Sync()
}
