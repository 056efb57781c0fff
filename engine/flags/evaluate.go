package flags

import (
	"bytes"
	"context"
	"encoding/json"
)

// Evaluation runs on the node's in-memory snapshot only: no database, no
// log, no lock. A flag is evaluated for a context (a flat map of
// attribute to value) like this:
//
//  1. a disabled flag serves its default value (reason disabled);
//  2. otherwise its rules are tried in order; a rule matches when its
//     when condition holds (a rule without one: always), the context is
//     inside its rollout (if it has one) and each of its prerequisites
//     holds; the first rule that matches serves its variation (reason
//     rule_match, with the rule's id);
//  3. when none matches, the default value is served (reason no_match).
//
// A prerequisite {key, variation} holds when flag key, evaluated for the
// same context, serves the value of its variation variation (an unknown
// flag or variation: it does not hold). Each flag is evaluated at most
// once per call, however many rules name it.

// evaluation is one call's state.
type evaluation struct {
	snap  *snapshot
	attrs map[string]any
	// memo holds the flags evaluated as prerequisites.
	memo  map[string]outcome
	depth int
}

// outcome is what a flag serves, and why.
type outcome struct {
	val       *value
	variation string
	ruleID    string
	reason    string
}

// flag evaluates f.
func (ev *evaluation) flag(f *compiledFlag) outcome {
	if !f.flag.Enabled {
		return outcome{val: f.def, reason: ReasonDisabled}
	}
	for i := range f.rules {
		r := &f.rules[i]
		if r.when != nil && !r.when.match(ev) {
			continue
		}
		if r.rollout && !ev.inRollout(f.flag.Key, r) {
			continue
		}
		if len(r.prereqs) > 0 && !ev.prerequisites(r.prereqs) {
			continue
		}
		return outcome{val: r.val, variation: r.variation, ruleID: r.id, reason: ReasonRuleMatch}
	}
	return outcome{val: f.def, reason: ReasonNoMatch}
}

// inRollout reports whether the context's bucket for flag key falls
// inside r's rollout.
func (ev *evaluation) inRollout(key string, r *compiledRule) bool {
	a, ok := ev.attrs[r.sticky]
	if !ok {
		return false
	}
	s, ok := stickyText(a)
	return ok && Bucket(key, s) < r.threshold
}

// prerequisites reports whether every prerequisite holds.
func (ev *evaluation) prerequisites(ps []Prerequisite) bool {
	if ev.depth >= maxEvalDepth {
		return false
	}
	for _, p := range ps {
		pf := ev.snap.flags[p.Key]
		if pf == nil {
			return false
		}
		want := pf.vars[p.Variation]
		if want == nil {
			return false
		}
		got, ok := ev.memo[p.Key]
		if !ok {
			ev.depth++
			got = ev.flag(pf)
			ev.depth--
			if ev.memo == nil {
				ev.memo = map[string]outcome{}
			}
			ev.memo[p.Key] = got
		}
		if !bytes.Equal(got.val.raw, want.raw) {
			return false
		}
	}
	return true
}

// each evaluates the flags keys (every flag, in key order, when keys is
// empty; unknown keys are skipped) and calls fn with each outcome.
func (m *Flags) each(attrs map[string]any, keys []string, fn func(key string, o outcome)) {
	snap := m.snap.Load()
	if len(keys) == 0 {
		keys = snap.keys
	}
	ev := &evaluation{snap: snap, attrs: attrs}
	for _, k := range keys {
		f := snap.flags[k]
		if f == nil {
			continue
		}
		o, ok := ev.memo[k]
		if !ok {
			o = ev.flag(f)
		}
		fn(k, o)
	}
}

// Evaluate evaluates flags for a context: the value of each of keys
// (every flag when keys is empty), by key. Unknown keys are left out.
// The values are the caller's own copies (helpers.flags in server-side
// code: a script may change what it gets). It reads the node's snapshot
// only, so it is as fast on a follower as on the leader.
func (m *Flags) Evaluate(ctx context.Context, attrs map[string]any, keys []string) (map[string]any, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make(map[string]any, max(len(keys), 8))
	m.each(attrs, keys, func(k string, o outcome) { out[k] = copyValue(o.val.v) })
	return out, nil
}

// EvaluateJSON is Evaluate with each value as JSON (the public evaluate
// route): the value only, never the rule or the reason.
func (m *Flags) EvaluateJSON(ctx context.Context, attrs map[string]any, keys []string) (map[string]json.RawMessage, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make(map[string]json.RawMessage, max(len(keys), 8))
	m.each(attrs, keys, func(k string, o outcome) { out[k] = o.val.raw })
	return out, nil
}

// EvaluateFlag evaluates flag key for a context and says why it serves
// what it serves (the admin evaluate route): 404 for an unknown flag.
func (m *Flags) EvaluateFlag(ctx context.Context, key string, attrs map[string]any) (*Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	snap := m.snap.Load()
	f := snap.flags[key]
	if f == nil {
		return nil, errFlagNotFound
	}
	o := (&evaluation{snap: snap, attrs: attrs}).flag(f)
	res := &Result{Key: key, Value: o.val.raw, Reason: o.reason}
	if o.reason == ReasonRuleMatch {
		res.Variation, res.RuleID = &o.variation, &o.ruleID
	}
	return res, nil
}
