package api_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"svcd/api/apitest"
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
