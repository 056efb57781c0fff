package files

import (
	"context"
	"errors"
	"io"
	"strings"

	"svcd/engine"
)

// removedResult answers a command that only removes files: how many.
type removedResult struct {
	Removed int `json:"removed"`
}

// Upload stores the files of parts (form field "file", repeated for a
// multiple field) in field of the existing record id of coll (SPEC.md:
// POST /files/:collection/:recordId/:field). A single field's file
// replaces the one it held; a multiple field's are appended. The caller
// must be signed in and pass the update rule; validation runs before
// anything is stored.
func (m *Files) Upload(ctx context.Context, p engine.Principal, coll, id, field string, parts Parts) (*Uploaded, uint64, error) {
	if p.Kind == engine.Anonymous {
		return nil, 0, errAuthRequired
	}
	ci, err := m.core.Records().Writable(coll)
	if err != nil {
		return nil, 0, err
	}
	f, _ := fileField(ci, field)
	if f == nil {
		return nil, 0, errNoFileField
	}
	admin, err := engine.WriteRights(p, ci)
	if err != nil {
		return nil, 0, err
	}
	if err := m.checkWrite(ctx, p, ci, id, admin, ci.UpdateRule); err != nil {
		return nil, 0, err
	}
	store, driver, err := m.currentStore(ctx)
	if err != nil {
		return nil, 0, err
	}
	var metas []fileMeta
	for {
		part, err := parts.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err == nil && (part.Name != "file" || part.FileName == "") {
			continue
		}
		if err == nil && !f.Multiple && len(metas) == 1 {
			err = errSecondFile(f.Name)
		}
		var meta fileMeta
		if err == nil {
			meta, err = m.store(ctx, store, driver, f, part)
		}
		if err != nil {
			m.discard(store, metas)
			return nil, 0, err
		}
		metas = append(metas, meta)
	}
	if len(metas) == 0 {
		return nil, 0, errNoFileSent
	}
	ch := fieldChange{Field: f.ID, Clear: !f.Multiple}
	for _, mt := range metas {
		ch.Add = append(ch.Add, mt.Name)
	}
	_, idx, err := m.proposeChange(ctx, p, coll, id, "", nil, []fieldChange{ch}, metas, false)
	if err != nil {
		if definite(err) {
			m.discard(store, metas)
		}
		return nil, idx, err
	}
	out := &Uploaded{Multiple: f.Multiple, Files: make([]FileObject, len(metas))}
	for i, mt := range metas {
		out.Files[i] = mt.object()
	}
	return out, idx, nil
}

// Uploaded is what an upload stored: SPEC.md answers the file object of
// a single field, the array of a multiple one.
type Uploaded struct {
	Files    []FileObject
	Multiple bool
}

// proposeChange proposes a change of record id's files (and, for a
// multipart update, of its other fields: body as sent, values prepared
// with PrepareUpdate) by p. A schema change committed in between is
// retried with the collection as it now is (field ids do not change).
// With count set the answer is the number of files removed, else the
// stored row.
func (m *Files) proposeChange(ctx context.Context, p engine.Principal, coll, id, ifMatch string, body map[string]any,
	changes []fieldChange, metas []fileMeta, count bool) (any, uint64, error) {
	rs := m.core.Records()
	for attempt := 0; ; attempt++ {
		ci, err := rs.Writable(coll)
		if err != nil {
			return nil, 0, err
		}
		admin, err := engine.WriteRights(p, ci)
		if err != nil {
			return nil, 0, err
		}
		if err := engine.PreWriteError(ci, ci.UpdateRule, admin); err != nil {
			return nil, 0, err
		}
		now := m.core.Now().Unix()
		var values map[string]any
		plain, mods, verr := engine.SplitModifiers(ci, body)
		if verr != nil {
			return nil, 0, verr
		}
		if len(plain) > 0 {
			v, verr := rs.PrepareUpdate(ci, plain, admin, now)
			if verr != nil {
				return nil, 0, verr
			}
			values = v
		}
		envBody, envValues := withFileNames(ci, plain, values, changes)
		cmd := changeCmd{
			Coll: ci.ID, Ver: ci.Version, Admin: admin, ID: id, Now: now, IfMatch: ifMatch,
			Env: rs.UpdateEnv(p, ci, envBody, envValues, now), Actor: engine.ActorOf(p),
			Values: values, Changes: changes, Files: metas, Count: count, Required: true, Mods: mods,
		}
		for _, ch := range changes {
			if len(ch.Restore) > 0 {
				cmd.RestoreSince = m.restoreSince(now)
				break
			}
		}
		typ := cmdChange
		if len(mods) > 0 {
			typ = cmdChangeMods
		}
		res, idx, err := m.core.Propose(ctx, typ, cmd)
		if errors.Is(err, engine.ErrSchemaMoved) && attempt < 3 {
			continue
		}
		return res, idx, err
	}
}

// withFileNames adds the file fields a change touches to the body and
// values a rule's @request.body sees (the names the change adds or
// restores).
func withFileNames(ci *engine.Coll, body, values map[string]any, changes []fieldChange) (map[string]any, map[string]any) {
	b := make(map[string]any, len(body)+len(changes))
	v := make(map[string]any, len(values)+len(changes))
	for k, x := range body {
		b[k] = x
	}
	for k, x := range values {
		v[k] = x
	}
	for _, ch := range changes {
		if f, _ := fieldByID(ci, ch.Field); f != nil {
			names := append(append([]string(nil), ch.Add...), ch.Restore...)
			b[f.Name] = names
			v[f.Name] = storedValue(f.Multiple, names)
		}
	}
	return b, v
}

// checkWrite decides, on this replica and before any byte is stored, what
// the state machine will decide again at apply time: the record exists,
// the caller may view it and rule (the update rule) admits the change.
// A rule that reads @request.body is left to the apply, which sees the
// request's body.
func (m *Files) checkWrite(ctx context.Context, p engine.Principal, ci *engine.Coll, id string, admin bool, rule *string) error {
	if err := engine.PreWriteError(ci, rule, admin); err != nil {
		return err
	}
	env := engine.ReadEnv(p, m.core.Now().Unix())
	return m.core.ReadAs(ctx, p, func(rd *engine.Reading) error {
		var n int
		if err := rd.SQL().QueryRow("SELECT count(*) FROM "+ci.Table()+" WHERE id = ?", id).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return engine.ErrNotFound
		}
		if admin {
			return nil
		}
		if ok, err := rd.RuleHolds(ci, ci.ViewRule, false, env, id); err != nil || !ok {
			return engine.FirstErr(err, engine.ErrNotFound)
		}
		if rule != nil && strings.Contains(*rule, "@request.body") {
			return nil
		}
		if ok, err := rd.RuleHolds(ci, rule, false, env, id); err != nil || !ok {
			return engine.FirstErr(err, engine.ErrForbidden)
		}
		return nil
	})
}

// removedAnswer is what a removal's apply returns: the count of files it
// removed from the record.
func removedAnswer(before, after []any, changes []fieldChange, ci *engine.Coll) *removedResult {
	n := 0
	for _, ch := range changes {
		if _, i := fieldByID(ci, ch.Field); i >= 0 {
			n += len(storedNames(before[3+i])) - len(storedNames(after[3+i]))
		}
	}
	return &removedResult{Removed: max(n, 0)}
}
