package api_test

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"svcd/api/apitest"
)

var recordIDPattern = regexp.MustCompile(`^[a-z0-9]{15}$`)

func TestRecordCreateGet(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	c := s.CreateCollection(t, public(coll("posts", "base", []map[string]any{f("title", "text"), f("views", "number")})))

	t.Run("create answers 201 with the system fields, ETag and X-Svc-Index", func(t *testing.T) {
		res, body := s.AdminDo(t, http.MethodPost, "/api/v1/posts", map[string]any{"title": "hello", "views": 1})
		apitest.CheckCommon(t, res, body)
		if res.StatusCode != http.StatusCreated {
			t.Fatalf("create: %d %s", res.StatusCode, body)
		}
		rec := apitest.Obj(t, apitest.DecodeMap(t, body)["data"])
		id, _ := rec["id"].(string)
		if !recordIDPattern.MatchString(id) {
			t.Errorf("id = %q", rec["id"])
		}
		if rec["collectionId"] != c["id"] || rec["collectionName"] != "posts" {
			t.Errorf("collectionId/collectionName = %v/%v", rec["collectionId"], rec["collectionName"])
		}
		created, updated := apitest.Int(t, rec["created"]), apitest.Int(t, rec["updated"])
		if created <= 0 || created != updated {
			t.Errorf("created/updated = %d/%d", created, updated)
		}
		if rec["title"] != "hello" || fmt.Sprint(rec["views"]) != "1" {
			t.Errorf("record = %v", rec)
		}
		createdTag := res.Header.Get("ETag")
		checkWeakETag(t, createdTag, id)
		if res.Header.Get("X-Svc-Index") == "" {
			t.Error("no X-Svc-Index")
		}

		res, body = s.Do(t, http.MethodGet, "/api/v1/posts/"+id, nil, nil)
		apitest.CheckCommon(t, res, body)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("get: %d %s", res.StatusCode, body)
		}
		etag := res.Header.Get("ETag")
		if etag != createdTag {
			t.Errorf("GET ETag = %q, create answered %q", etag, createdTag)
		}
		if res.Header.Get("X-Svc-Index") != "" {
			t.Error("a read carries X-Svc-Index")
		}
		got := apitest.Obj(t, apitest.DecodeMap(t, body)["data"])
		if fmt.Sprint(got) != fmt.Sprint(rec) {
			t.Errorf("GET %v != created %v", got, rec)
		}

		apitest.Run(t, s, []apitest.Scenario{
			{
				Name:            "If-None-Match with the current tag is 304",
				URL:             "/api/v1/posts/" + id,
				Headers:         map[string]string{"If-None-Match": etag},
				ExpectedStatus:  http.StatusNotModified,
				ExpectedHeaders: map[string]string{"ETag": etag},
				AfterFunc: func(t testing.TB, s *apitest.Server, body []byte) {
					if len(body) != 0 {
						t.Errorf("304 with a body: %q", body)
					}
				},
			},
			{
				Name:           "If-None-Match in a list with the strong form is 304",
				URL:            "/api/v1/posts/" + id,
				Headers:        map[string]string{"If-None-Match": `"other", ` + etag[2:]},
				ExpectedStatus: http.StatusNotModified,
			},
			{
				Name:           "If-None-Match * is 304",
				URL:            "/api/v1/posts/" + id,
				Headers:        map[string]string{"If-None-Match": "*"},
				ExpectedStatus: http.StatusNotModified,
			},
			{
				Name:            "If-None-Match with another tag is 200",
				URL:             "/api/v1/posts/" + id,
				Headers:         map[string]string{"If-None-Match": `W/"` + id + `-1"`},
				ExpectedStatus:  http.StatusOK,
				ExpectedHeaders: map[string]string{"ETag": etag},
			},
		})
	})

	apitest.Run(t, s, []apitest.Scenario{
		{
			Name:            "a client-supplied id is kept",
			Method:          http.MethodPost,
			URL:             "/api/v1/posts",
			Admin:           true,
			Body:            map[string]any{"id": "abcdefghij12345", "title": "mine"},
			ExpectedStatus:  http.StatusCreated,
			ExpectedContent: []string{`"id":"abcdefghij12345"`},
		},
		{
			Name:            "a taken id is 422 on id",
			Method:          http.MethodPost,
			URL:             "/api/v1/posts",
			Admin:           true,
			Body:            map[string]any{"id": "abcdefghij12345", "title": "again"},
			ExpectedStatus:  http.StatusUnprocessableEntity,
			AfterFunc:       apitest.Details("id"),
			ExpectedContent: []string{"already exists"},
		},
		{
			Name:           "an anonymous caller may supply an id too (create rule is public)",
			Method:         http.MethodPost,
			URL:            "/api/v1/posts",
			Body:           map[string]any{"id": "zzzzzzzzzzzzzzz"},
			ExpectedStatus: http.StatusCreated,
		},
		{
			Name:               "system fields in the body are ignored",
			Method:             http.MethodPost,
			URL:                "/api/v1/posts",
			Admin:              true,
			Body:               map[string]any{"created": 5, "updated": 6, "collectionId": "x", "collectionName": "y", "unknown": 1},
			ExpectedStatus:     http.StatusCreated,
			ExpectedContent:    []string{`"collectionName":"posts"`},
			NotExpectedContent: []string{`"created":5,`, `"updated":6,`, `"unknown"`},
		},
		{
			Name:               "fields projects a single record too, keeping id",
			URL:                "/api/v1/posts/abcdefghij12345?fields=title",
			ExpectedStatus:     http.StatusOK,
			ExpectedContent:    []string{`{"data":{"id":"abcdefghij12345","title":"mine"}}`},
			ExpectedHeaders:    map[string]string{"ETag": "*"},
			NotExpectedContent: []string{"collectionName", "created"},
		},
		{
			Name:            "unknown record is 404",
			URL:             "/api/v1/posts/aaaaaaaaaaaaaaa",
			ExpectedStatus:  http.StatusNotFound,
			ExpectedContent: []string{"wasn't found"},
		},
		{
			Name:           "a malformed record id is 404",
			URL:            "/api/v1/posts/NOT-AN-ID",
			ExpectedStatus: http.StatusNotFound,
		},
	})

	var bad []apitest.Scenario
	for _, id := range []any{"short", "ABCDEFGHIJ12345", "abcdefghij1234_", "abcdefghij123456", "", 123456789012345, true} {
		bad = append(bad, apitest.Scenario{
			Name:           fmt.Sprintf("a malformed id %v is 422 on id", id),
			Method:         http.MethodPost,
			URL:            "/api/v1/posts",
			Admin:          true,
			Body:           map[string]any{"id": id},
			ExpectedStatus: http.StatusUnprocessableEntity,
			AfterFunc:      apitest.Details("id"),
		})
	}
	t.Run("malformed ids", func(t *testing.T) { apitest.Run(t, s, bad) })
}

func TestRecordUpdateDelete(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, coll("posts", "base", []map[string]any{f("title", "text"), f("body", "text"), f("views", "number")}))
	rec := s.CreateRecord(t, "posts", map[string]any{"title": "t0", "body": "b0", "views": 1})
	id := rec["id"].(string)
	url := "/api/v1/posts/" + id

	t.Run("PATCH changes only the given fields and updated always grows", func(t *testing.T) {
		prevUpdated := apitest.Int(t, rec["updated"])
		_, prevTag := getRecord(t, s, "posts", id)
		for i := 1; i <= 3; i++ {
			res, body := s.AdminDo(t, http.MethodPatch, url, map[string]any{"title": fmt.Sprintf("t%d", i)})
			apitest.CheckCommon(t, res, body)
			if res.StatusCode != http.StatusOK {
				t.Fatalf("patch %d: %d %s", i, res.StatusCode, body)
			}
			got := apitest.Obj(t, apitest.DecodeMap(t, body)["data"])
			if got["title"] != fmt.Sprintf("t%d", i) || got["body"] != "b0" || fmt.Sprint(got["views"]) != "1" {
				t.Errorf("after patch %d: %v", i, got)
			}
			if got["created"].(fmt.Stringer).String() != rec["created"].(fmt.Stringer).String() {
				t.Errorf("created moved: %v -> %v", rec["created"], got["created"])
			}
			updated := apitest.Int(t, got["updated"])
			if updated <= prevUpdated {
				t.Errorf("patch %d: updated %d, previous %d: not strictly increasing", i, updated, prevUpdated)
			}
			tag := res.Header.Get("ETag")
			checkWeakETag(t, tag, id)
			if tag == prevTag {
				t.Errorf("patch %d: ETag %q did not change", i, tag)
			}
			if _, cur := getRecord(t, s, "posts", id); cur != tag {
				t.Errorf("patch %d answered ETag %q, GET answers %q", i, tag, cur)
			}
			if res.Header.Get("X-Svc-Index") == "" {
				t.Error("no X-Svc-Index on PATCH")
			}
			prevUpdated, prevTag = updated, tag
		}
	})

	stale := `W/"` + id + `-1"` // no version of the record has this tag

	apitest.Run(t, s, []apitest.Scenario{
		{
			Name:            "an empty patch only moves updated",
			Method:          http.MethodPatch,
			URL:             url,
			Admin:           true,
			Body:            map[string]any{},
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"title":"t3"`, `"body":"b0"`},
		},
		{
			Name:            "null clears a field",
			Method:          http.MethodPatch,
			URL:             url,
			Admin:           true,
			Body:            map[string]any{"body": nil},
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"body":null`, `"title":"t3"`},
		},
	})

	t.Run("If-Match with a stale tag is 412 with the current ETag and changes nothing", func(t *testing.T) {
		_, cur := getRecord(t, s, "posts", id)
		res, body := s.Do(t, http.MethodPatch, url, map[string]any{"title": "nope"}, s.AdminHeaders(t, map[string]string{"If-Match": stale}))
		apitest.CheckCommon(t, res, body)
		if res.StatusCode != http.StatusPreconditionFailed {
			t.Fatalf("status %d %s", res.StatusCode, body)
		}
		if res.Header.Get("ETag") != cur {
			t.Errorf("412 ETag = %q, want %q", res.Header.Get("ETag"), cur)
		}
		got, after := getRecord(t, s, "posts", id)
		if got["title"] == "nope" || after != cur {
			t.Errorf("a failed If-Match changed the record: %v %s", got, after)
		}
	})

	t.Run("If-Match with the current tag is 200", func(t *testing.T) {
		_, cur := getRecord(t, s, "posts", id)
		apitest.Scenario{
			Method:          http.MethodPatch,
			URL:             url,
			Admin:           true,
			Body:            map[string]any{"title": "matched"},
			Headers:         map[string]string{"If-Match": cur},
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"title":"matched"`},
		}.Test(t, s)
		// The strong form of the same tag matches too (weak comparison).
		_, cur = getRecord(t, s, "posts", id)
		apitest.Scenario{
			Method:         http.MethodPatch,
			URL:            url,
			Admin:          true,
			Body:           map[string]any{"title": "strong"},
			Headers:        map[string]string{"If-Match": cur[2:]},
			ExpectedStatus: http.StatusOK,
		}.Test(t, s)
	})

	apitest.Run(t, s, []apitest.Scenario{
		{
			Name:            "If-Match * is 200",
			Method:          http.MethodPatch,
			URL:             url,
			Admin:           true,
			Body:            map[string]any{"title": "star"},
			Headers:         map[string]string{"If-Match": "*"},
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"title":"star"`},
		},
		{
			Name:            "PUT is an update too",
			Method:          http.MethodPut,
			URL:             url,
			Admin:           true,
			Body:            map[string]any{"views": 9},
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"title":"star"`, `"views":9`},
		},
		{
			Name:           "PATCH of an unknown record is 404",
			Method:         http.MethodPatch,
			URL:            "/api/v1/posts/aaaaaaaaaaaaaaa",
			Admin:          true,
			Body:           map[string]any{"title": "x"},
			ExpectedStatus: http.StatusNotFound,
		},
		{
			Name:            "DELETE with a stale If-Match is 412",
			Method:          http.MethodDelete,
			URL:             url,
			Admin:           true,
			Headers:         map[string]string{"If-Match": stale},
			ExpectedStatus:  http.StatusPreconditionFailed,
			ExpectedHeaders: map[string]string{"ETag": "*"},
		},
		{
			Name:           "the record survived",
			URL:            url,
			Admin:          true,
			ExpectedStatus: http.StatusOK,
		},
		{
			Name:            "DELETE answers 204",
			Method:          http.MethodDelete,
			URL:             url,
			Admin:           true,
			ExpectedStatus:  http.StatusNoContent,
			ExpectedHeaders: map[string]string{"X-Svc-Index": "*"},
			AfterFunc: func(t testing.TB, s *apitest.Server, body []byte) {
				if len(body) != 0 {
					t.Errorf("204 with body %q", body)
				}
			},
		},
		{
			Name:           "then GET is 404",
			URL:            url,
			Admin:          true,
			ExpectedStatus: http.StatusNotFound,
		},
		{
			Name:           "then PATCH is 404",
			Method:         http.MethodPatch,
			URL:            url,
			Admin:          true,
			Body:           map[string]any{"title": "x"},
			ExpectedStatus: http.StatusNotFound,
		},
		{
			Name:           "then DELETE is 404",
			Method:         http.MethodDelete,
			URL:            url,
			Admin:          true,
			ExpectedStatus: http.StatusNotFound,
		},
		{
			Name:            "and the list no longer has it",
			URL:             "/api/v1/posts",
			Admin:           true,
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"totalItems":0`},
		},
	})
}

func TestRecordDeleteWithCurrentIfMatch(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, coll("posts", "base", []map[string]any{f("title", "text")}))
	id := s.CreateRecord(t, "posts", map[string]any{"title": "x"})["id"].(string)
	_, etag := getRecord(t, s, "posts", id)
	apitest.Scenario{
		Method:         http.MethodDelete,
		URL:            "/api/v1/posts/" + id,
		Admin:          true,
		Headers:        map[string]string{"If-Match": etag},
		ExpectedStatus: http.StatusNoContent,
	}.Test(t, s)
}

func TestRecordUnknownCollectionAndBadBodies(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, public(coll("posts", "base", []map[string]any{f("title", "text")})))
	id := s.CreateRecord(t, "posts", map[string]any{"title": "x"})["id"].(string)

	var sc []apitest.Scenario
	for _, r := range []struct{ method, url string }{
		{http.MethodGet, "/api/v1/nope"},
		{http.MethodPost, "/api/v1/nope"},
		{http.MethodGet, "/api/v1/nope/" + id},
		{http.MethodPatch, "/api/v1/nope/" + id},
		{http.MethodDelete, "/api/v1/nope/" + id},
		{http.MethodGet, "/api/collections/nope/records"},
		{http.MethodGet, "/api/collections/nope/records/" + id},
	} {
		for _, admin := range []bool{false, true} {
			sc = append(sc, apitest.Scenario{
				Name:           fmt.Sprintf("%s %s (admin %v) is 404", r.method, r.url, admin),
				Method:         r.method,
				URL:            r.url,
				Admin:          admin,
				Body:           map[string]any{},
				ExpectedStatus: http.StatusNotFound,
			})
		}
	}
	// The brief asked for 400 on a body that is not a JSON object; commit
	// 2566e63 made JSON type mismatches a 422 naming the member ("body" for the
	// whole body), while null stays a 400. Either refuses the request.
	for _, b := range []struct{ name, body string }{
		{"an array", `[{"title":"x"}]`},
		{"null", `null`},
		{"a string", `"title"`},
		{"a number", `1`},
	} {
		sc = append(sc,
			apitest.Scenario{
				Name:      "create with " + b.name + " is refused",
				Method:    http.MethodPost,
				URL:       "/api/v1/posts",
				Admin:     true,
				Body:      b.body,
				AfterFunc: apitest.StatusIn(http.StatusBadRequest, http.StatusUnprocessableEntity),
			},
			apitest.Scenario{
				Name:      "update with " + b.name + " is refused",
				Method:    http.MethodPatch,
				URL:       "/api/v1/posts/" + id,
				Admin:     true,
				Body:      b.body,
				AfterFunc: apitest.StatusIn(http.StatusBadRequest, http.StatusUnprocessableEntity),
			},
		)
	}
	sc = append(sc, apitest.Scenario{
		Name:            "nothing was created or changed by the refused bodies",
		URL:             "/api/v1/posts/" + id,
		ExpectedStatus:  http.StatusOK,
		ExpectedContent: []string{`"title":"x"`},
		AfterFunc: func(t testing.TB, s *apitest.Server, _ []byte) {
			if ids := listIDs(t, s, "/api/v1/posts"); len(ids) != 1 {
				t.Errorf("records %v, want only %s", ids, id)
			}
		},
	})
	for _, b := range []struct{ name, body string }{
		{"malformed JSON", `{"title":`},
		{"an empty body", ``},
		{"trailing data", `{"title":"a"} {"title":"b"}`},
	} {
		sc = append(sc,
			apitest.Scenario{
				Name:           "create with " + b.name + " is 400",
				Method:         http.MethodPost,
				URL:            "/api/v1/posts",
				Admin:          true,
				Body:           b.body,
				ExpectedStatus: http.StatusBadRequest,
			},
			apitest.Scenario{
				Name:           "update with " + b.name + " is 400",
				Method:         http.MethodPatch,
				URL:            "/api/v1/posts/" + id,
				Admin:          true,
				Body:           b.body,
				ExpectedStatus: http.StatusBadRequest,
			},
		)
	}
	apitest.Run(t, s, sc)
}

// TestRecordETagAfterRecreate: a record deleted and created again with the
// same id within one second must not get the old incarnation's ETag, or a
// stale If-Match passes and a stale If-None-Match answers 304.
func TestRecordETagAfterRecreate(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, coll("posts", "base", []map[string]any{f("title", "text")}, "view_rule", ""))
	for attempt := range 5 {
		id := fmt.Sprintf("recreate%07d", attempt)
		s.CreateRecord(t, "posts", map[string]any{"id": id, "title": "first"})
		_, old := getRecord(t, s, "posts", id)
		s.MustAdmin(t, http.StatusNoContent, http.MethodDelete, "/api/v1/posts/"+id, nil)
		s.CreateRecord(t, "posts", map[string]any{"id": id, "title": "second"})
		_, cur := getRecord(t, s, "posts", id)
		if old == cur {
			t.Errorf("the new record %s has the ETag %s of the deleted one", id, cur)
			apitest.Scenario{
				URL:             "/api/v1/posts/" + id,
				Headers:         map[string]string{"If-None-Match": old},
				ExpectedStatus:  http.StatusOK,
				ExpectedContent: []string{`"title":"second"`},
			}.Test(t, s)
			return
		}
		// Crossed a second boundary: the tags differ by chance. Try again.
	}
}

// checkWeakETag checks the form of a record's ETag: weak, quoted, naming
// the record.
func checkWeakETag(t testing.TB, tag, id string) {
	t.Helper()
	if !strings.HasPrefix(tag, `W/"`) || !strings.HasSuffix(tag, `"`) || !strings.Contains(tag, id) {
		t.Errorf("ETag %q is not a weak tag naming %s", tag, id)
	}
}
