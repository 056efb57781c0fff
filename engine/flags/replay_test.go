package flags_test

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"testing"

	"svcd/engine"
	"svcd/engine/flags"
	"svcd/fsm"
)

// workload writes flags and segments, some of the writes refused at
// apply time (a cycle, a missing segment, a delete of what is needed).
func workload(t *testing.T, v *env) {
	t.Helper()
	v.segment("staff", map[string]any{"attr": "email", "op": "ends_with", "value": "@corp.example"})
	v.segment("beta", map[string]any{"any": []any{map[string]any{"segment": "staff"}, map[string]any{"attr": "beta", "op": "eq", "value": true}}})
	v.put(map[string]any{"key": "base", "rules": []any{map[string]any{"when": map[string]any{"segment": "beta"}, "variation": "on"}}})
	v.put(map[string]any{"key": "child", "type": "string", "variations": map[string]any{"a": "A", "b": "B"}, "default_value": "none",
		"rules": []any{map[string]any{"prerequisites": []any{map[string]any{"key": "base", "variation": "on"}}, "rollout": map[string]any{"value": 50}, "variation": "a"},
			map[string]any{"variation": "b"}}})
	refused := []func() error{
		func() error { // a cycle
			_, _, err := v.f.PatchFlag(v.ctx, "base", js(map[string]any{"rules": []any{map[string]any{"prerequisites": []any{map[string]any{"key": "child", "variation": "a"}}, "variation": "on"}}}))
			return err
		},
		func() error { // a missing segment
			_, _, _, err := v.f.PutFlag(v.ctx, js(map[string]any{"key": "x", "rules": []any{map[string]any{"when": map[string]any{"segment": "nope"}, "variation": "on"}}}))
			return err
		},
		func() error { // needed by child
			_, err := v.f.DeleteFlag(v.ctx, "base")
			return err
		},
		func() error { // referenced by beta
			_, err := v.f.DeleteSegment(v.ctx, "staff")
			return err
		},
	}
	for i, fn := range refused {
		if err := fn(); engine.AsError(err) == nil {
			t.Fatalf("refused write %d: %v, want a domain error", i, err)
		}
	}
	if _, _, err := v.f.PatchFlag(v.ctx, "child", js(map[string]any{"enabled": false})); err != nil {
		t.Fatal(err)
	}
	v.put(map[string]any{"key": "gone"})
	if _, err := v.f.DeleteFlag(v.ctx, "gone"); err != nil {
		t.Fatal(err)
	}
}

// TestReplayDeterminism: the log of the workload, replayed into a fresh
// store in one batch, builds byte-identical tables, and a node that
// starts on that database evaluates and lists the same flags.
func TestReplayDeterminism(t *testing.T) {
	v := newEnv(t)
	workload(t, v)

	dir := t.TempDir()
	path := filepath.Join(dir, "replica.db")
	replica, err := fsm.Open(fsm.Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	_, rf := wire(t, replica)
	var entries []fsm.Entry
	for i, c := range v.log.cmds {
		entries = append(entries, fsm.Entry{Index: uint64(i + 1), Data: c.Encode()})
	}
	replica.ApplyBatch(entries)
	want, err := v.store.Digest(v.ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, err := replica.Digest(v.ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"_svc_flags", "_svc_flag_segments", "_svc_flag_refs"} {
		if want["table:"+table] == "" {
			t.Errorf("the node's digest has no table %s", table)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("digests differ:\nreplica %v\nnode    %v", got, want)
	}
	same := func(name string, f *flags.Flags) {
		t.Helper()
		l, _ := f.ListFlags(v.ctx)
		ref, _ := v.f.ListFlags(v.ctx)
		if a, b := js(l), js(ref); string(a) != string(b) {
			t.Errorf("%s lists\n%s\nthe node\n%s", name, a, b)
		}
		attrs := map[string]any{"email": "bo@corp.example", "id": "u7"}
		a, _ := f.EvaluateJSON(v.ctx, attrs, nil)
		b, _ := v.f.EvaluateJSON(v.ctx, attrs, nil)
		if !reflect.DeepEqual(a, b) || len(a) != 2 {
			t.Errorf("%s evaluates %s, the node %s", name, js(a), js(b))
		}
	}
	same("the replica (snapshot from events)", rf)
	if err := replica.Close(); err != nil {
		t.Fatal(err)
	}
	reopened, err := fsm.Open(fsm.Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reopened.Close() })
	_, sf := wire(t, reopened)
	same("a node started on the replica (snapshot from the database)", sf)
}

// TestPatchMergesAgainAfterAConcurrentWrite: a PATCH merged onto a
// revision that another write replaced before it applied is merged
// again onto the new one, so neither change is lost.
func TestPatchMergesAgainAfterAConcurrentWrite(t *testing.T) {
	v := newEnv(t)
	v.put(map[string]any{"key": "f", "type": "number", "default_value": 1})
	v.log.before = func() {
		// Committed between the PATCH's merge and its apply.
		v.log.mu.Lock()
		v.log.before = nil
		v.log.mu.Unlock()
		if _, _, err := v.f.PatchFlag(v.ctx, "f", js(map[string]any{"enabled": false})); err != nil {
			t.Errorf("concurrent patch: %v", err)
		}
	}
	f, _, err := v.f.PatchFlag(v.ctx, "f", js(map[string]any{"default_value": 7}))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := v.f.Flag(v.ctx, "f")
	if string(got.DefaultValue) != "7" || got.Enabled {
		t.Fatalf("after both patches: default %s, enabled %v; want 7 and false", got.DefaultValue, got.Enabled)
	}
	if f.Enabled || string(f.DefaultValue) != "7" {
		t.Errorf("the patch answered default %s, enabled %v", f.DefaultValue, f.Enabled)
	}
	// The first attempt was refused at apply time and retried: three
	// flag puts after the create.
	puts := 0
	for _, c := range v.log.cmds {
		if c.Type == 110 {
			puts++
		}
	}
	if puts != 4 {
		t.Errorf("%d flag puts in the log, want 4 (create, concurrent patch, refused patch, patch again)", puts)
	}
	var e *engine.Error
	if _, _, err := v.f.PatchFlag(v.ctx, "nope", js(map[string]any{"enabled": true})); !errors.As(err, &e) || e.Kind != engine.KindNotFound {
		t.Errorf("patch of an unknown flag: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(js(got), &m); err != nil || m["rules"] == nil {
		t.Errorf("a flag without rules shows rules: []: %s", js(got))
	}
}
