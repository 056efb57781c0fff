package flags

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"svcd/engine"
	"svcd/fsm"
)

// flagPutCmd creates or replaces flag Key with Def.
type flagPutCmd struct {
	Key string `json:"key"`
	// Def is the checked definition, canonical JSON (definition()).
	Def string `json:"def"`
	// Variations are Def's variation names, sorted.
	Variations []string `json:"variations"`
	// Refs are Def's prerequisites and segment references.
	Refs []ref `json:"refs,omitempty"`
	Now  int64 `json:"now"`
	// IfRev, when set, applies the command only to that revision of an
	// existing flag (a PATCH merged onto it).
	IfRev int64 `json:"if_rev,omitempty"`
}

// deleteCmd deletes flag or segment Name.
type deleteCmd struct {
	Name string `json:"name"`
}

// definition is what _svc_flags.def keeps: the flag without timestamps.
func (f *Flag) definition() ([]byte, error) {
	return marshalCanonical(struct {
		Key string `json:"key"`
		flagDef
	}{f.Key, f.flagDef})
}

// PutFlag creates a flag from a definition (the body of POST
// /admin/flags), or replaces the flag with that key; created says which.
func (m *Flags) PutFlag(ctx context.Context, body []byte) (*Flag, bool, uint64, error) {
	f, err := parseFlag(body)
	if err != nil {
		return nil, false, 0, err
	}
	res, idx, err := m.proposeFlag(ctx, f, 0)
	if err != nil {
		return nil, false, idx, err
	}
	return f, res.Op == "create", idx, nil
}

// PatchFlag changes the members of flag key that patch names (a PATCH
// body: any of type, default_value, variations, rules, enabled); the
// result must be a valid flag. A concurrent change of the flag makes it
// merge again, up to three times.
func (m *Flags) PatchFlag(ctx context.Context, key string, patch []byte) (*Flag, uint64, error) {
	for attempt := 0; ; attempt++ {
		cur := m.snap.Load().flags[key]
		if cur == nil {
			return nil, 0, errFlagNotFound
		}
		merged, err := mergeFlag(cur.flag, patch)
		if err != nil {
			return nil, 0, err
		}
		f, err := parseFlag(merged)
		if err != nil {
			return nil, 0, err
		}
		_, idx, err := m.proposeFlag(ctx, f, cur.flag.rev)
		if errors.Is(err, errMoved) && attempt < 3 {
			continue
		}
		if err != nil {
			return nil, idx, err
		}
		return f, idx, nil
	}
}

// proposeFlag proposes f and fills in its timestamps from the answer.
func (m *Flags) proposeFlag(ctx context.Context, f *Flag, ifRev int64) (*putResult, uint64, error) {
	def, err := f.definition()
	if err != nil {
		return nil, 0, err
	}
	vars := make([]string, 0, len(f.Variations))
	for name := range f.Variations {
		vars = append(vars, name)
	}
	slices.Sort(vars)
	cmd := flagPutCmd{Key: f.Key, Def: string(def), Variations: vars, Refs: f.refs(), Now: m.core.Now().Unix(), IfRev: ifRev}
	v, idx, err := m.core.Propose(ctx, cmdFlagPut, cmd)
	if err != nil {
		return nil, idx, err
	}
	res, ok := v.(*putResult)
	if !ok {
		return nil, idx, fmt.Errorf("flags: put answered %T", v)
	}
	f.rev, f.Created, f.Updated = res.Rev, res.Created, res.Updated
	return res, idx, nil
}

// DeleteFlag deletes flag key; 409 while other flags have it as a
// prerequisite (details.flags names them).
func (m *Flags) DeleteFlag(ctx context.Context, key string) (uint64, error) {
	if m.snap.Load().flags[key] == nil {
		return 0, errFlagNotFound
	}
	_, idx, err := m.core.Propose(ctx, cmdFlagDelete, deleteCmd{Name: key})
	return idx, err
}

func (m *Flags) applyFlagPut(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[flagPutCmd](cmd)
	if err != nil {
		return nil, err
	}
	var rev, created, updated int64
	err = tx.QueryRow(`SELECT rev, created, updated FROM _svc_flags WHERE key = ?`, c.Key).Scan(&rev, &created, &updated)
	exists := err == nil
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	if c.IfRev > 0 && !exists {
		return nil, errFlagNotFound
	}
	if c.IfRev > 0 && rev != c.IfRev {
		return nil, errMoved
	}
	if err := checkRefs(tx, refFlag, c.Key, c.Refs); err != nil {
		return nil, err
	}
	vars, err := marshalCanonical(c.Variations)
	if err != nil {
		return nil, err
	}
	res := &putResult{Op: "create", Rev: 1, Created: c.Now, Updated: c.Now}
	if exists {
		if err := checkDependents(tx, c.Key, c.Variations); err != nil {
			return nil, err
		}
		res = &putResult{Op: "update", Rev: rev + 1, Created: created, Updated: max(c.Now, updated)}
		_, err = tx.Exec(`UPDATE _svc_flags SET def = ?, variations = ?, rev = ?, updated = ? WHERE key = ?`,
			c.Def, string(vars), res.Rev, res.Updated, c.Key)
	} else {
		_, err = tx.Exec(`INSERT INTO _svc_flags (key, def, variations, rev, created, updated) VALUES (?, ?, ?, ?, ?, ?)`,
			c.Key, c.Def, string(vars), res.Rev, res.Created, res.Updated)
	}
	if err != nil {
		return nil, err
	}
	if err := writeRefs(tx, refFlag, c.Key, c.Refs); err != nil {
		return nil, err
	}
	emit(tx, refFlag, res.Op, c.Key)
	return res, nil
}

func (m *Flags) applyFlagDelete(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[deleteCmd](cmd)
	if err != nil {
		return nil, err
	}
	var one int
	if err := tx.QueryRow(`SELECT 1 FROM _svc_flags WHERE key = ?`, c.Name).Scan(&one); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, errFlagNotFound
		}
		return nil, err
	}
	deps, err := dependents(tx, refFlag, c.Name)
	if err != nil {
		return nil, err
	}
	if len(deps) > 0 {
		return nil, &engine.Error{Kind: engine.KindConflict, Message: "Other flags have this flag as a prerequisite; change them first", Details: deps}
	}
	if _, err := tx.Exec(`DELETE FROM _svc_flags WHERE key = ?`, c.Name); err != nil {
		return nil, err
	}
	if err := writeRefs(tx, refFlag, c.Name, nil); err != nil {
		return nil, err
	}
	emit(tx, refFlag, "delete", c.Name)
	return nil, nil
}
