package flags_test

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"testing"

	"svcd/engine/flags"
)

// bucketByTheDoc is docs/flags.md's formula, written out apart from the
// module's.
func bucketByTheDoc(key, sticky string) uint64 {
	sum := sha256.Sum256([]byte(key + ":" + sticky))
	return binary.BigEndian.Uint64(sum[:8]) % 10000
}

// TestBucketIsTheDocumentedHash: the bucket is the documented formula,
// and a few buckets are pinned, so that no release moves a user to
// another bucket.
func TestBucketIsTheDocumentedHash(t *testing.T) {
	for i := range 1000 {
		key, sticky := fmt.Sprintf("flag-%d", i%7), fmt.Sprintf("user-%d", i)
		if got, want := flags.Bucket(key, sticky), bucketByTheDoc(key, sticky); got != want {
			t.Fatalf("Bucket(%q, %q) = %d, the documented formula gives %d", key, sticky, got, want)
		}
	}
	// Computed once with Python's hashlib, apart from Go.
	pinned := []struct {
		key, sticky string
		bucket      uint64
	}{
		{"new-checkout", "u1", 9384},
		{"new-checkout", "u2", 4628},
		{"dark-mode", "42", 3160},
		{"dark-mode", "ann@x.y", 699},
	}
	for _, p := range pinned {
		if got := flags.Bucket(p.key, p.sticky); got != p.bucket {
			t.Errorf("Bucket(%q, %q) = %d, pinned %d", p.key, p.sticky, got, p.bucket)
		}
	}
}

// TestRolloutDistributionAndStickiness: over many sticky values a rollout
// admits close to its percentage, exactly the contexts whose documented
// bucket is below it, the same ones every time; raising the percentage
// only adds contexts; numbers bucket as their decimal text; a context
// without the sticky attribute is in no rollout.
func TestRolloutDistributionAndStickiness(t *testing.T) {
	v := newEnv(t)
	roll := func(pct float64) {
		v.put(map[string]any{"key": "exp", "rules": []any{
			map[string]any{"rollout": map[string]any{"value": pct, "sticky": "uid"}, "variation": "on"},
		}})
	}
	const n = 20000
	in := func() map[int]bool {
		out := map[int]bool{}
		for i := range n {
			if v.eval("exp", map[string]any{"uid": fmt.Sprintf("user-%d", i)}) == true {
				out[i] = true
			}
		}
		return out
	}
	roll(30)
	first := in()
	if frac := float64(len(first)) / n; frac < 0.29 || frac > 0.31 {
		t.Errorf("30%% rollout admitted %.4f of %d contexts", frac, n)
	}
	for i := range n {
		if want := bucketByTheDoc("exp", fmt.Sprintf("user-%d", i)) < 3000; first[i] != want {
			t.Fatalf("user-%d: in rollout %v, the documented bucket says %v", i, first[i], want)
		}
	}
	if again := in(); len(again) != len(first) {
		t.Errorf("the same contexts again: %d admitted, then %d", len(first), len(again))
	}
	roll(55.5)
	wider := in()
	for i := range first {
		if !wider[i] {
			t.Fatalf("user-%d was in the 30%% rollout and is out of the 55.5%%", i)
		}
	}
	if frac := float64(len(wider)) / n; frac < 0.545 || frac > 0.565 {
		t.Errorf("55.5%% rollout admitted %.4f", frac)
	}
	// A number buckets as its decimal text.
	roll(50)
	for i := range 200 {
		want := bucketByTheDoc("exp", fmt.Sprint(i)) < 5000
		if got := v.eval("exp", map[string]any{"uid": float64(i)}) == true; got != want {
			t.Fatalf("uid %d (a number): in %v, want %v", i, got, want)
		}
		if got := v.eval("exp", map[string]any{"uid": int64(i)}) == true; got != want {
			t.Fatalf("uid %d (an int64): in %v, want %v", i, got, want)
		}
	}
	roll(100)
	if got := v.eval("exp", map[string]any{"other": "x"}); got != false {
		t.Errorf("no sticky attribute: got %v, want the default false", got)
	}
	if got := v.eval("exp", map[string]any{"uid": nil}); got != false {
		t.Errorf("a null sticky attribute: got %v, want the default false", got)
	}
}
