package flags

import (
	"context"
	"slices"
	"strings"
)

// Admin reads come from the snapshot, like evaluations: the replica's
// committed flags and segments, including every write this node
// acknowledged. What they return is shared with the snapshot: read only.

// ListFlags is every flag, by key.
func (m *Flags) ListFlags(ctx context.Context) ([]*Flag, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	snap := m.snap.Load()
	out := make([]*Flag, 0, len(snap.keys))
	for _, k := range snap.keys {
		out = append(out, snap.flags[k].flag)
	}
	return out, nil
}

// Flag is flag key (404 when unknown).
func (m *Flags) Flag(ctx context.Context, key string) (*Flag, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f := m.snap.Load().flags[key]
	if f == nil {
		return nil, errFlagNotFound
	}
	return f.flag, nil
}

// ListSegments is every segment, by name.
func (m *Flags) ListSegments(ctx context.Context) ([]*Segment, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	snap := m.snap.Load()
	out := make([]*Segment, 0, len(snap.segs))
	for _, s := range snap.segs {
		out = append(out, s.seg)
	}
	slices.SortFunc(out, func(a, b *Segment) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Segment is segment name (404 when unknown).
func (m *Flags) Segment(ctx context.Context, name string) (*Segment, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := m.snap.Load().segs[name]
	if s == nil {
		return nil, errSegmentNotFound
	}
	return s.seg, nil
}
