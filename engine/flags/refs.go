package flags

// A ref is one reference of a flag or segment to another: a flag's
// prerequisite (Kind flag, with the variation it needs) or a condition's
// {segment: name}. Path says where it is, for the error that names a
// missing target. The proposer lists a definition's refs in its command;
// the apply checks them against the committed state and keeps them in
// _svc_flag_refs, from which deletes learn who still depends on what.
type ref struct {
	Kind      string `json:"kind"`
	Name      string `json:"name"`
	Variation string `json:"variation,omitempty"`
	Path      string `json:"path"`
}

// Kinds of refs and of what changes (engine.FlagChange.Kind).
const (
	refFlag    = "flag"
	refSegment = "segment"
)

// refs lists the flag's prerequisites and segment references.
func (f *Flag) refs() []ref {
	var out []ref
	for i, r := range f.Rules {
		path := indexPath("rules", i)
		for j, pr := range r.Prerequisites {
			out = append(out, ref{Kind: refFlag, Name: pr.Key, Variation: pr.Variation, Path: indexPath(path+".prerequisites", j)})
		}
		out = r.When.segments(path+".when", out)
	}
	return out
}

// refs lists the segments the segment references.
func (s *Segment) refs() []ref {
	return s.Conditions.segments("conditions", nil)
}
