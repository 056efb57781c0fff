package api_test

import (
	"fmt"
	"hash/fnv"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"svcd/api/apitest"
	"svcd/fsm"
)

// Finding 11 of the security review (issue 13): a nested expand whose first
// level found no visible row panicked (strings: negative Repeat count),
// inside a batch in the state machine's apply; a sort of 2,000 terms was a
// 500.
func TestNestedExpandOfNothingAndLongSorts(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	// The first level's rule admits no row: nothing to expand below it.
	s.CreateCollection(t, coll("note", "base", []map[string]any{f("text", "text")}, "view_rule", `text = "shown"`))
	s.CreateCollection(t, coll("pub", "base", []map[string]any{f("title", "text"), f("note", "relation", "collection", "note")}, "view_rule", "", "create_rule", ""))
	n := s.CreateRecord(t, "note", map[string]any{"text": "x"})["id"].(string)
	p := s.CreateRecord(t, "pub", map[string]any{"title": "t", "note": n})["id"].(string)
	s.CreateRecord(t, "pub", map[string]any{"title": "u"})

	for _, path := range []string{
		"/api/v1/pub?expand=note.pub_via_note",
		"/api/v1/pub/" + p + "?expand=note.pub_via_note",
		"/api/v1/pub?expand=" + url.QueryEscape("note.pub_via_note.note.pub_via_note,nothing.pub_via_nothing"),
	} {
		res, body := s.Do(t, http.MethodGet, path, nil, nil)
		apitest.CheckCommon(t, res, body)
		if res.StatusCode != http.StatusOK || strings.Contains(string(body), `"expand"`) {
			t.Errorf("GET %s: %d %s", path, res.StatusCode, body)
		}
	}
	status, out, _ := runBatch(t, s, map[string]string{}, []map[string]any{
		entry("POST", "/api/v1/pub", map[string]any{"title": "v"}),
		entry("GET", "/api/v1/pub?expand=note.pub_via_note", nil),
	})
	if status != http.StatusOK {
		t.Fatalf("batch with a nested expand of nothing: %d %v", status, out)
	}

	terms := make([]string, 2000)
	for i := range terms {
		terms[i] = []string{"title", "-created", "id", "note", "-updated", "nope"}[i%6]
	}
	for _, sort := range []string{strings.Join(terms, ","), strings.Repeat("-title,", 3000)} {
		for _, h := range []map[string]string{nil, s.AdminHeaders(t, nil)} {
			res, body := s.Do(t, http.MethodGet, "/api/v1/pub?sort="+url.QueryEscape(sort), nil, h)
			apitest.CheckCommon(t, res, body)
			if res.StatusCode != http.StatusOK {
				t.Errorf("a sort of %d terms: %d %.200s", strings.Count(sort, ",")+1, res.StatusCode, body)
			}
		}
	}
	// The first term of a column decides: "title,-title" sorts ascending.
	got := listIDs(t, s, "/api/v1/pub?sort="+url.QueryEscape("title,-title"))
	want := listIDs(t, s, "/api/v1/pub?sort=title")
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("sort title,-title = %v, want %v", got, want)
	}
}

// Finding 4 of the security review (issue 13): the ETag was an unkeyed hash
// of the whole stored row, so an anonymous caller recovered a hidden
// four-digit pin (or a hidden boolean) offline in under a second. This test
// is that attacker: it hashes every candidate row the way the old tag did.
func TestETagRevealsNoHiddenValue(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, coll("pins", "base", []map[string]any{
		f("title", "text"), f("pin", "text", "hidden", true), f("vip", "bool", "hidden", true),
	}, "view_rule", ""))
	id := s.CreateRecord(t, "pins", map[string]any{"title": "door", "pin": "4711", "vip": true})["id"].(string)
	res, body := s.Do(t, http.MethodGet, "/api/v1/pins/"+id, nil, nil)
	tag := res.Header.Get("ETag")
	rec := apitest.Obj(t, apitest.DecodeMap(t, body)["data"])
	if res.StatusCode != http.StatusOK || tag == "" || rec["pin"] != nil {
		t.Fatalf("GET: %d %q %s", res.StatusCode, tag, body)
	}
	parts := strings.Split(strings.Trim(strings.TrimPrefix(tag, "W/"), `"`), "-")
	if len(parts) != 3 || parts[0] != id {
		t.Fatalf("ETag %q", tag)
	}
	created, updated := apitest.Int(t, rec["created"]), apitest.Int(t, rec["updated"])
	for pin := range 10000 {
		for _, vip := range []int64{0, 1} {
			h := fnv.New64a()
			fsm.HashValues(h, []any{id, created, updated, "door", fmt.Sprintf("%04d", pin), vip})
			if strconv.FormatUint(h.Sum64(), 36) == parts[1] {
				t.Fatalf("the ETag %s gives the hidden values away: pin %04d, vip %d", tag, pin, vip)
			}
		}
	}
	// It still changes with a hidden value (If-Match keeps guarding it).
	s.MustAdmin(t, http.StatusOK, http.MethodPatch, "/api/v1/pins/"+id, map[string]any{"pin": "0000"})
	if res, _ := s.Do(t, http.MethodGet, "/api/v1/pins/"+id, nil, nil); res.Header.Get("ETag") == tag {
		t.Errorf("a change of a hidden field kept the ETag %s", tag)
	}
}
