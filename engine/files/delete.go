package files

import (
	"context"

	"svcd/engine"
)

// Delete removes the file name from field of record id of coll, under the
// update rule (SPEC.md: DELETE /files/:collection/:recordId/:field/:filename).
// Its bytes and thumbnails go after the grace period.
func (m *Files) Delete(ctx context.Context, p engine.Principal, coll, id, field, name string) (uint64, error) {
	f, err := m.writableField(coll, field)
	if err != nil {
		return 0, err
	}
	_, idx, err := m.proposeChange(ctx, p, coll, id, "", nil, []fieldChange{{Field: f.ID, Remove: []string{name}}}, nil, true)
	return idx, err
}

// DeleteAll removes every file of field of record id of coll, under the
// update rule: how many it removed.
func (m *Files) DeleteAll(ctx context.Context, p engine.Principal, coll, id, field string) (int, uint64, error) {
	f, err := m.writableField(coll, field)
	if err != nil {
		return 0, 0, err
	}
	res, idx, err := m.proposeChange(ctx, p, coll, id, "", nil, []fieldChange{{Field: f.ID, Clear: true}}, nil, true)
	if err != nil {
		return 0, idx, err
	}
	r, _ := res.(*removedResult)
	if r == nil {
		return 0, idx, nil
	}
	return r.Removed, idx, nil
}

// writableField resolves a file field of a writable collection.
func (m *Files) writableField(coll, field string) (*engine.FieldInfo, error) {
	ci, err := m.core.Records().Writable(coll)
	if err != nil {
		return nil, err
	}
	f, _ := fileField(ci, field)
	if f == nil {
		return nil, errNoFileField
	}
	return f, nil
}
