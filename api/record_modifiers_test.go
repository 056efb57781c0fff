package api_test

import (
	"fmt"
	"sync"
	"testing"

	"svcd/api/apitest"
)

func modifiersCollection() map[string]any {
	return map[string]any{"name": "counters", "type": "base", "view_rule": "", "update_rule": "", "fields": []any{
		map[string]any{"name": "views", "type": "number", "integer": true, "max": 1000},
		map[string]any{"name": "tags", "type": "select", "values": []string{"a", "b", "c", "d"}, "multiple": true, "max_select": 3},
		map[string]any{"name": "title", "type": "text"},
	}}
}

// TestRecordModifiersCluster: "views+": 1 from many goroutines through
// all three nodes of a cluster loses no increment (the modifier applies
// to the row the state machine reads, not to one the API read earlier).
func TestRecordModifiersCluster(t *testing.T) {
	t.Parallel()
	c := apitest.StartCluster(t, 3, apitest.Options{})
	c.AdminToken(t)
	leader := c.Leader(t)
	leader.CreateCollection(t, modifiersCollection())
	id := leader.CreateRecord(t, "counters", map[string]any{"views": 0})["id"].(string)
	c.Sync(t)
	nodes := append([]*apitest.Server{leader}, c.Followers(t)...)
	const perNode, each = 6, 5
	var wg sync.WaitGroup
	for _, s := range nodes {
		h := s.AdminHeaders(t, nil)
		for g := 0; g < perNode; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < each; i++ {
					res, out, err := s.Send("PATCH", "/api/v1/counters/"+id, map[string]any{"views+": 1}, h)
					if err != nil || res.StatusCode != 200 {
						t.Errorf("views+ on %s: %v %s", s.Stack.Node.NodeID(), err, out)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	c.Sync(t)
	want := int64(len(nodes) * perNode * each)
	for _, s := range nodes {
		// A create applies them over the body's value or over nothing.
		for _, c := range []struct {
			body  map[string]any
			views int64
			tags  string
		}{
			{map[string]any{"views+": 3, "tags+": []string{"a"}, "+tags": "b"}, 3, "[b a]"},
			{map[string]any{"views": 2, "views-": 5, "tags": []string{"a", "c"}, "tags-": "a"}, -3, "[c]"},
		} {
			r := s.CreateRecord(t, "counters", c.body)
			if apitest.Int(t, r["views"]) != c.views || fmt.Sprint(r["tags"]) != c.tags {
				t.Errorf("create %v: %v %v, want %d %s", c.body, r["views"], r["tags"], c.views, c.tags)
			}
		}
		if res, out := s.AdminDo(t, "POST", "/api/v1/counters", map[string]any{"tags+": "zz"}); res.StatusCode != 422 {
			t.Errorf("create with a bad appended value: %d %s", res.StatusCode, out)
		}

		d := s.MustAdmin(t, 200, "GET", "/api/v1/counters/"+id, nil)
		if got := apitest.Int(t, apitest.Obj(t, d["data"])["views"]); got != want {
			t.Errorf("views on %s = %d, want %d", s.Stack.Node.NodeID(), got, want)
		}
	}
}

// TestRecordModifiers covers each modifier and its checks on one node.
func TestRecordModifiers(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, modifiersCollection())
	id := s.CreateRecord(t, "counters", map[string]any{"views": 10, "tags": []string{"b"}})["id"].(string)
	patch := func(body map[string]any) (int, map[string]any) {
		t.Helper()
		res, out := s.AdminDo(t, "PATCH", "/api/v1/counters/"+id, body)
		return res.StatusCode, apitest.DecodeMap(t, out)
	}
	steps := []struct {
		body  map[string]any
		views int64
		tags  string
	}{
		{map[string]any{"views+": 5}, 15, "[b]"},
		{map[string]any{"views-": 20}, -5, "[b]"},
		{map[string]any{"views": 100, "views+": 1}, 101, "[b]"},
		{map[string]any{"tags+": "c"}, 101, "[b c]"},
		{map[string]any{"+tags": []string{"a"}}, 101, "[a b c]"},
		{map[string]any{"tags-": []string{"b", "x"}}, 101, "[a c]"},
		{map[string]any{"tags+": "a"}, 101, "[a c]"}, // duplicates are dropped as in a plain write
		{map[string]any{"tags": []string{"d"}, "tags+": "a", "title": "t"}, 101, "[d a]"},
	}
	for _, st := range steps {
		code, out := patch(st.body)
		if code != 200 {
			t.Fatalf("%v: %d %v", st.body, code, out)
		}
		d := apitest.Obj(t, out["data"])
		if got := apitest.Int(t, d["views"]); got != st.views || fmt.Sprint(d["tags"]) != st.tags {
			t.Fatalf("%v: views %d tags %v, want %d %s", st.body, got, d["tags"], st.views, st.tags)
		}
	}
	for _, bad := range []struct {
		body map[string]any
		key  string
	}{
		{map[string]any{"views+": "many"}, "views+"},
		{map[string]any{"+views": 1}, "+views"},
		{map[string]any{"title+": "x"}, "title+"},
		{map[string]any{"tags+": 3}, "tags+"},
		{map[string]any{"views+": 2000}, "views"},             // over max, checked at apply
		{map[string]any{"tags+": []string{"b", "c"}}, "tags"}, // a d b c: over max_select
		{map[string]any{"tags+": "zz"}, "tags"},               // not a value
	} {
		code, out := patch(bad.body)
		details, _ := out["details"].(map[string]any)
		if code != 422 || details[bad.key] == nil {
			t.Errorf("%v: %d %v, want 422 naming %s", bad.body, code, out, bad.key)
		}
	}
	// A create applies them over the body's value or over nothing.
	for _, c := range []struct {
		body  map[string]any
		views int64
		tags  string
	}{
		{map[string]any{"views+": 3, "tags+": []string{"a"}, "+tags": "b"}, 3, "[b a]"},
		{map[string]any{"views": 2, "views-": 5, "tags": []string{"a", "c"}, "tags-": "a"}, -3, "[c]"},
	} {
		r := s.CreateRecord(t, "counters", c.body)
		if apitest.Int(t, r["views"]) != c.views || fmt.Sprint(r["tags"]) != c.tags {
			t.Errorf("create %v: %v %v, want %d %s", c.body, r["views"], r["tags"], c.views, c.tags)
		}
	}
	if res, out := s.AdminDo(t, "POST", "/api/v1/counters", map[string]any{"tags+": "zz"}); res.StatusCode != 422 {
		t.Errorf("create with a bad appended value: %d %s", res.StatusCode, out)
	}

	d := s.MustAdmin(t, 200, "GET", "/api/v1/counters/"+id, nil)
	if r := apitest.Obj(t, d["data"]); apitest.Int(t, r["views"]) != 101 || fmt.Sprint(r["tags"]) != "[d a]" {
		t.Fatalf("refused modifiers changed the record: %v", r)
	}
}
