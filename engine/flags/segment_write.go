package flags

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"svcd/engine"
	"svcd/fsm"
)

// segmentPutCmd creates or replaces segment Name with Def.
type segmentPutCmd struct {
	Name string `json:"name"`
	// Def is the checked segment, canonical JSON (definition()).
	Def string `json:"def"`
	// Refs are the segments Def references.
	Refs  []ref `json:"refs,omitempty"`
	Now   int64 `json:"now"`
	IfRev int64 `json:"if_rev,omitempty"`
}

// definition is what _svc_flag_segments.def keeps.
func (s *Segment) definition() ([]byte, error) {
	return marshalCanonical(struct {
		Name       string     `json:"name"`
		Conditions *Condition `json:"conditions"`
	}{s.Name, s.Conditions})
}

// PutSegment creates a segment ({name, conditions}: the body of POST
// /admin/flag-segments), or replaces the one with that name; created
// says which.
func (m *Flags) PutSegment(ctx context.Context, body []byte) (*Segment, bool, uint64, error) {
	s, err := parseSegment(body)
	if err != nil {
		return nil, false, 0, err
	}
	res, idx, err := m.proposeSegment(ctx, s, 0)
	if err != nil {
		return nil, false, idx, err
	}
	return s, res.Op == "create", idx, nil
}

// PatchSegment changes the conditions of segment name (a PATCH body
// {conditions}).
func (m *Flags) PatchSegment(ctx context.Context, name string, patch []byte) (*Segment, uint64, error) {
	for attempt := 0; ; attempt++ {
		cur := m.snap.Load().segs[name]
		if cur == nil {
			return nil, 0, errSegmentNotFound
		}
		merged, err := mergeSegment(cur.seg, patch)
		if err != nil {
			return nil, 0, err
		}
		s, err := parseSegment(merged)
		if err != nil {
			return nil, 0, err
		}
		_, idx, err := m.proposeSegment(ctx, s, cur.seg.rev)
		if errors.Is(err, errMoved) && attempt < 3 {
			continue
		}
		if err != nil {
			return nil, idx, err
		}
		return s, idx, nil
	}
}

// proposeSegment proposes s and fills in its timestamps.
func (m *Flags) proposeSegment(ctx context.Context, s *Segment, ifRev int64) (*putResult, uint64, error) {
	def, err := s.definition()
	if err != nil {
		return nil, 0, err
	}
	cmd := segmentPutCmd{Name: s.Name, Def: string(def), Refs: s.refs(), Now: m.core.Now().Unix(), IfRev: ifRev}
	v, idx, err := m.core.Propose(ctx, cmdSegmentPut, cmd)
	if err != nil {
		return nil, idx, err
	}
	res, ok := v.(*putResult)
	if !ok {
		return nil, idx, fmt.Errorf("flags: segment put answered %T", v)
	}
	s.rev, s.Created, s.Updated = res.Rev, res.Created, res.Updated
	return res, idx, nil
}

// DeleteSegment deletes segment name; 409 while flags or segments
// reference it (details.flags, details.segments name them).
func (m *Flags) DeleteSegment(ctx context.Context, name string) (uint64, error) {
	if m.snap.Load().segs[name] == nil {
		return 0, errSegmentNotFound
	}
	_, idx, err := m.core.Propose(ctx, cmdSegmentDelete, deleteCmd{Name: name})
	return idx, err
}

func (m *Flags) applySegmentPut(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[segmentPutCmd](cmd)
	if err != nil {
		return nil, err
	}
	var rev, created, updated int64
	err = tx.QueryRow(`SELECT rev, created, updated FROM _svc_flag_segments WHERE name = ?`, c.Name).Scan(&rev, &created, &updated)
	exists := err == nil
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	if c.IfRev > 0 && !exists {
		return nil, errSegmentNotFound
	}
	if c.IfRev > 0 && rev != c.IfRev {
		return nil, errMoved
	}
	if err := checkRefs(tx, refSegment, c.Name, c.Refs); err != nil {
		return nil, err
	}
	res := &putResult{Op: "create", Rev: 1, Created: c.Now, Updated: c.Now}
	if exists {
		res = &putResult{Op: "update", Rev: rev + 1, Created: created, Updated: max(c.Now, updated)}
		_, err = tx.Exec(`UPDATE _svc_flag_segments SET def = ?, rev = ?, updated = ? WHERE name = ?`, c.Def, res.Rev, res.Updated, c.Name)
	} else {
		_, err = tx.Exec(`INSERT INTO _svc_flag_segments (name, def, rev, created, updated) VALUES (?, ?, ?, ?, ?)`,
			c.Name, c.Def, res.Rev, res.Created, res.Updated)
	}
	if err != nil {
		return nil, err
	}
	if err := writeRefs(tx, refSegment, c.Name, c.Refs); err != nil {
		return nil, err
	}
	emit(tx, refSegment, res.Op, c.Name)
	return res, nil
}

func (m *Flags) applySegmentDelete(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[deleteCmd](cmd)
	if err != nil {
		return nil, err
	}
	var one int
	if err := tx.QueryRow(`SELECT 1 FROM _svc_flag_segments WHERE name = ?`, c.Name).Scan(&one); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, errSegmentNotFound
		}
		return nil, err
	}
	deps, err := dependents(tx, refSegment, c.Name)
	if err != nil {
		return nil, err
	}
	if len(deps) > 0 {
		return nil, &engine.Error{Kind: engine.KindConflict, Message: "Flags or segments reference this segment; change them first", Details: deps}
	}
	if _, err := tx.Exec(`DELETE FROM _svc_flag_segments WHERE name = ?`, c.Name); err != nil {
		return nil, err
	}
	if err := writeRefs(tx, refSegment, c.Name, nil); err != nil {
		return nil, err
	}
	emit(tx, refSegment, "delete", c.Name)
	return nil, nil
}
