package api_test

import (
	"net/http"
	"testing"

	"svcd/api/apitest"
)

// TestRecordDeleteRelations: CONTRACT.md relation options "cascade or
// restrict (neither: the id is removed from the referring record)"; SPEC.md
// 409 "delete blocked by a restrict relation (with details)".
func TestRecordDeleteRelations(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, coll("authors", "base", []map[string]any{f("name", "text")}))
	s.CreateCollection(t, coll("books", "base", []map[string]any{
		f("title", "text"),
		f("kept", "relation", "collection", "authors", "restrict", true),
		f("owner", "relation", "collection", "authors", "cascade", true),
		f("fans", "relation", "collection", "authors", "multiple", true),
		f("editor", "relation", "collection", "authors"),
	}))
	author := func(name string) string {
		return s.CreateRecord(t, "authors", map[string]any{"name": name})["id"].(string)
	}

	t.Run("restrict blocks the delete with 409", func(t *testing.T) {
		a := author("restricted")
		s.CreateRecord(t, "books", map[string]any{"title": "b", "kept": a})
		apitest.Scenario{
			Method:         http.MethodDelete,
			URL:            "/api/v1/authors/" + a,
			Admin:          true,
			ExpectedStatus: http.StatusConflict,
			AfterFunc: func(t testing.TB, s *apitest.Server, body []byte) {
				if len(body) == 0 {
					return
				}
				if _, ok := apitest.DecodeMap(t, body)["details"]; !ok {
					t.Errorf("409 without details: %s", body)
				}
			},
		}.Test(t, s)
		getRecord(t, s, "authors", a) // still there
	})

	t.Run("cascade deletes the referring record", func(t *testing.T) {
		a := author("cascaded")
		b := s.CreateRecord(t, "books", map[string]any{"title": "b", "owner": a})["id"].(string)
		s.MustAdmin(t, http.StatusNoContent, http.MethodDelete, "/api/v1/authors/"+a, nil)
		apitest.Scenario{URL: "/api/v1/books/" + b, Admin: true, ExpectedStatus: http.StatusNotFound}.Test(t, s)
	})

	t.Run("neither removes the id from the referring record", func(t *testing.T) {
		a, other := author("plain"), author("other")
		b := s.CreateRecord(t, "books", map[string]any{"title": "b", "editor": a, "fans": []string{a, other}})["id"].(string)
		s.MustAdmin(t, http.StatusNoContent, http.MethodDelete, "/api/v1/authors/"+a, nil)
		rec, _ := getRecord(t, s, "books", b)
		if ed, _ := rec["editor"].(string); ed != "" {
			t.Errorf("editor still points at the deleted record: %v", rec["editor"])
		}
		fans := apitest.List(t, rec["fans"])
		if len(fans) != 1 || fans[0] != other {
			t.Errorf("fans = %v, want [%s]", fans, other)
		}
	})
}

// TestRecordDeleteRequiredRelation: removing the id would leave a required
// relation empty, so the delete is refused (409 naming the field) and
// nothing changes.
func TestRecordDeleteRequiredRelation(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, coll("people", "base", []map[string]any{f("name", "text")}))
	s.CreateCollection(t, coll("tasks", "base", []map[string]any{
		f("title", "text"),
		f("assignee", "relation", "collection", "people", "required", true),
		f("watchers", "relation", "collection", "people", "multiple", true, "required", true),
	}))
	p1 := s.CreateRecord(t, "people", map[string]any{"name": "p1"})["id"].(string)
	p2 := s.CreateRecord(t, "people", map[string]any{"name": "p2"})["id"].(string)
	task := s.CreateRecord(t, "tasks", map[string]any{"title": "t", "assignee": p1, "watchers": []string{p1, p2}})["id"].(string)
	apitest.Scenario{
		Method: http.MethodDelete, URL: "/api/v1/people/" + p1, Admin: true,
		ExpectedStatus:  http.StatusConflict,
		ExpectedContent: []string{"tasks.assignee"},
	}.Test(t, s)
	getRecord(t, s, "people", p1) // still there
	// p2 is only one of two watchers: removing it leaves one, so it may go.
	s.MustAdmin(t, http.StatusNoContent, http.MethodDelete, "/api/v1/people/"+p2, nil)
	rec, _ := getRecord(t, s, "tasks", task)
	if w := apitest.List(t, rec["watchers"]); len(w) != 1 || w[0] != p1 {
		t.Errorf("watchers = %v, want [%s]", w, p1)
	}
}
