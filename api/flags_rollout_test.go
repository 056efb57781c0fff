package api_test

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"testing"

	"svcd/api/apitest"
)

// docBucket is docs/flags.md's rollout bucket, computed here apart from
// the server's.
func docBucket(key, sticky string) uint64 {
	sum := sha256.Sum256([]byte(key + ":" + sticky))
	return binary.BigEndian.Uint64(sum[:8]) % 10000
}

// TestFlagRollout: through the public route, a 40% rollout admits
// exactly the contexts whose documented bucket is below 4000 (close to
// 40% of them), the same ones on every call; it buckets by its sticky
// attribute (the id by default); a context without it is in no rollout;
// a rollout combines with a condition, and a context outside the rollout
// falls through to the next rule.
func TestFlagRollout(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	putFlag(t, s, map[string]any{"key": "new-search", "type": "string", "default_value": "old",
		"variations": map[string]any{"new": "new", "fallback": "fallback"},
		"rules": []any{
			map[string]any{"id": "forty", "rollout": map[string]any{"value": 40}, "variation": "new"},
			map[string]any{"id": "rest", "when": test("country", "eq", "FR"), "variation": "fallback"},
		}})
	putFlag(t, s, map[string]any{"key": "team-pilot", "rules": []any{
		map[string]any{"when": test("plan", "eq", "pro"), "rollout": map[string]any{"value": 50, "sticky": "team"}, "variation": "on"},
	}})
	const n = 600
	admitted := 0
	for i := range n {
		id := fmt.Sprintf("user-%d", i)
		want := "old"
		if docBucket("new-search", id) < 4000 {
			want = "new"
			admitted++
		}
		got := evalFlags(t, s, map[string]any{"id": id}, "new-search")["new-search"]
		if got != want {
			t.Fatalf("%s: %v, the documented bucket %d says %v", id, got, docBucket("new-search", id), want)
		}
		if i%50 == 0 {
			if again := evalFlags(t, s, map[string]any{"id": id, "other": i}, "new-search")["new-search"]; again != got {
				t.Fatalf("%s again: %v, first %v", id, again, got)
			}
		}
	}
	if frac := float64(admitted) / n; frac < 0.34 || frac > 0.46 {
		t.Errorf("the 40%% rollout admitted %.3f of %d ids", frac, n)
	}
	// Outside the rollout, the next rule still applies.
	for i := range 40 {
		id := fmt.Sprintf("fr-%d", i)
		want := "fallback"
		if docBucket("new-search", id) < 4000 {
			want = "new"
		}
		res := explain(t, s, "new-search", map[string]any{"id": id, "country": "FR"})
		if res["value"] != want {
			t.Fatalf("%s in France: %v, want %v", id, res, want)
		}
	}
	if got := evalFlags(t, s, map[string]any{"email": "x@y.z"}, "new-search")["new-search"]; got != "old" {
		t.Errorf("no id: %v, want old", got)
	}
	// Sticky by team: every member of a team gets the team's answer.
	for team := range 30 {
		name := fmt.Sprintf("team-%d", team)
		want := docBucket("team-pilot", name) < 5000
		for member := range 3 {
			got := evalFlags(t, s, map[string]any{"id": fmt.Sprintf("%d-%d", team, member), "team": name, "plan": "pro"}, "team-pilot")["team-pilot"]
			if got != want {
				t.Fatalf("%s member %d: %v, want %v", name, member, got, want)
			}
		}
		if got := evalFlags(t, s, map[string]any{"team": name, "plan": "free"}, "team-pilot")["team-pilot"]; got != false {
			t.Fatalf("%s on the free plan: %v", name, got)
		}
	}
}
