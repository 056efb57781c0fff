package flags

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"

	"svcd/engine"
	"svcd/fsm"
)

// The snapshot is every flag and segment of the replica, compiled, held
// behind an atomic pointer: evaluations and admin reads load it without
// a lock, and a change replaces it whole. It is refreshed from committed
// events (the flag and segment commands emit engine.EvFlagChange in
// their apply), after the apply's transaction commits and before the
// applied index is published, so a request released by that index (the
// writer's own answer, X-Svc-Min-Index on another node) sees the change.
// A flag event reloads that flag, a segment event that segment; a
// restore or a migration reloads everything.

// snapshot is the compiled state of every flag and segment.
type snapshot struct {
	flags map[string]*compiledFlag
	keys  []string // sorted
	segs  map[string]*compiledSegment
	// bad are the stored definitions a refresh could not compile (left
	// out, and logged): a database restored from a newer version, say.
	bad []error
}

func emptySnapshot() *snapshot {
	return &snapshot{flags: map[string]*compiledFlag{}, segs: map[string]*compiledSegment{}}
}

// onEvents refreshes the snapshot for a batch of committed events.
func (m *Flags) onEvents(events []fsm.Event) {
	full := false
	var flags, segs []string
	for _, ev := range events {
		switch ev.Kind {
		case engine.EvFlagChange:
			fc, ok := ev.Data.(*engine.FlagChange)
			if !ok {
				continue
			}
			if fc.Kind == refSegment {
				segs = append(segs, fc.Key)
			} else {
				flags = append(flags, fc.Key)
			}
		case fsm.KindRestore, engine.EvMigrate:
			full = true
		}
	}
	if !full && len(flags)+len(segs) == 0 {
		return
	}
	if err := m.refresh(context.Background(), full, flags, segs); err != nil {
		m.core.Logger().Error("flags: refresh the snapshot", "err", err)
	}
}

// refresh reloads everything (full), or the named flags and segments.
func (m *Flags) refresh(ctx context.Context, full bool, flags, segs []string) error {
	if m.core.InternalVersion() < schemaVersion {
		m.snap.Store(emptySnapshot())
		return nil
	}
	next := emptySnapshot()
	if !full {
		cur := m.snap.Load()
		next.flags, next.segs = maps.Clone(cur.flags), maps.Clone(cur.segs)
	}
	err := m.core.Store().View(ctx, func(r *fsm.Reader) error {
		if full {
			return loadAll(r, next)
		}
		for _, k := range flags {
			if err := loadFlag(r, next, k); err != nil {
				return err
			}
		}
		for _, n := range segs {
			if err := loadSegment(r, next, n); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	next.keys = slices.Sorted(maps.Keys(next.flags))
	for _, err := range next.bad {
		m.core.Logger().Error("flags: a stored definition is left out of evaluation", "err", err)
	}
	next.bad = nil
	m.snap.Store(next)
	return nil
}

// loadAll reads every flag and segment into s.
func loadAll(r *fsm.Reader, s *snapshot) error {
	rows, err := r.Query(`SELECT key, def, rev, created, updated FROM _svc_flags`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var key, def string
		var rev, created, updated int64
		if err := rows.Scan(&key, &def, &rev, &created, &updated); err != nil {
			return err
		}
		putFlag(s, key, def, rev, created, updated)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	srows, err := r.Query(`SELECT name, def, rev, created, updated FROM _svc_flag_segments`)
	if err != nil {
		return err
	}
	defer srows.Close()
	for srows.Next() {
		var name, def string
		var rev, created, updated int64
		if err := srows.Scan(&name, &def, &rev, &created, &updated); err != nil {
			return err
		}
		putSegment(s, name, def, rev, created, updated)
	}
	return srows.Err()
}

// loadFlag reads flag key into s (removes it when it is gone).
func loadFlag(r *fsm.Reader, s *snapshot, key string) error {
	var def string
	var rev, created, updated int64
	err := r.QueryRow(`SELECT def, rev, created, updated FROM _svc_flags WHERE key = ?`, key).Scan(&def, &rev, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		delete(s.flags, key)
		return nil
	}
	if err != nil {
		return err
	}
	putFlag(s, key, def, rev, created, updated)
	return nil
}

// loadSegment reads segment name into s (removes it when it is gone).
func loadSegment(r *fsm.Reader, s *snapshot, name string) error {
	var def string
	var rev, created, updated int64
	err := r.QueryRow(`SELECT def, rev, created, updated FROM _svc_flag_segments WHERE name = ?`, name).Scan(&def, &rev, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		delete(s.segs, name)
		return nil
	}
	if err != nil {
		return err
	}
	putSegment(s, name, def, rev, created, updated)
	return nil
}

// putFlag compiles a stored flag into s (or records why it cannot).
func putFlag(s *snapshot, key, def string, rev, created, updated int64) {
	delete(s.flags, key)
	f, err := parseFlag([]byte(def))
	if err != nil {
		s.bad = append(s.bad, fmt.Errorf("stored flag %s: %w", key, err))
		return
	}
	f.Key, f.rev, f.Created, f.Updated = key, rev, created, updated
	cf, err := compileFlag(f)
	if err != nil {
		s.bad = append(s.bad, err)
		return
	}
	s.flags[key] = cf
}

// putSegment compiles a stored segment into s (or records why it
// cannot).
func putSegment(s *snapshot, name, def string, rev, created, updated int64) {
	delete(s.segs, name)
	seg, err := parseSegment([]byte(def))
	if err != nil {
		s.bad = append(s.bad, fmt.Errorf("stored segment %s: %w", name, err))
		return
	}
	seg.Name, seg.rev, seg.Created, seg.Updated = name, rev, created, updated
	cs, err := compileSegment(seg)
	if err != nil {
		s.bad = append(s.bad, err)
		return
	}
	s.segs[name] = cs
}
