package api_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"svcd/api/apitest"
)

func TestCollectionsNeedAnAdmin(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.AdminToken(t)
	var sc []apitest.Scenario
	for _, r := range []struct{ method, url string }{
		{http.MethodGet, collectionsURL},
		{http.MethodPost, collectionsURL},
		{http.MethodGet, collectionsURL + "/posts"},
		{http.MethodPatch, collectionsURL + "/posts"},
		{http.MethodDelete, collectionsURL + "/posts"},
	} {
		sc = append(sc, apitest.Scenario{
			Name:            "anonymous " + r.method + " " + r.url,
			Method:          r.method,
			URL:             r.url,
			Body:            map[string]any{"name": "posts"},
			ExpectedStatus:  http.StatusUnauthorized,
			ExpectedContent: []string{"Authentication required"},
		})
	}
	apitest.Run(t, s, sc)
}

var colIDPattern = regexp.MustCompile(`^col_[a-z0-9]{15}$`)

func TestCollectionsCreateListGet(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	var postsID string
	posts := coll("posts", "base", []map[string]any{
		f("title", "text", "required", true, "max", 100),
		f("views", "number", "min", 0),
	}, "view_rule", "")

	apitest.Run(t, s, []apitest.Scenario{
		{
			Name:            "list is empty at first",
			URL:             collectionsURL,
			Admin:           true,
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`{"data":[]}`},
		},
		{
			Name:            "create answers 201 with the collection and X-Svc-Index",
			Method:          http.MethodPost,
			URL:             collectionsURL,
			Admin:           true,
			Body:            posts,
			ExpectedStatus:  http.StatusCreated,
			ExpectedHeaders: map[string]string{"X-Svc-Index": "*"},
			ExpectedContent: []string{
				`"name":"posts"`, `"type":"base"`, `"view_rule":""`, `"create_rule":null`,
				`"update_rule":null`, `"delete_rule":null`, `"history_enabled":false`,
			},
			NotExpectedContent: []string{`"auth_options"`},
			AfterFunc: func(t testing.TB, s *apitest.Server, body []byte) {
				c := apitest.Obj(t, apitest.DecodeMap(t, body)["data"])
				postsID, _ = c["id"].(string)
				if !colIDPattern.MatchString(postsID) {
					t.Errorf("collection id %q", postsID)
				}
				if apitest.Int(t, c["created"]) <= 0 || apitest.Int(t, c["updated"]) < apitest.Int(t, c["created"]) {
					t.Errorf("created/updated = %v/%v", c["created"], c["updated"])
				}
				fields := apitest.List(t, c["fields"])
				if len(fields) != 2 {
					t.Fatalf("fields = %v", fields)
				}
				title := apitest.Obj(t, fields[0])
				if title["name"] != "title" || title["type"] != "text" || title["required"] != true ||
					title["unique"] != false || title["hidden"] != false {
					t.Errorf("title field = %v", title)
				}
				if id, _ := title["id"].(string); !strings.HasPrefix(id, "fld_") {
					t.Errorf("field id = %q", title["id"])
				}
				if apitest.Int(t, title["max"]) != 100 {
					t.Errorf("title.max = %v", title["max"])
				}
			},
		},
		{
			Name:            "list has it",
			URL:             collectionsURL,
			Admin:           true,
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"name":"posts"`},
		},
		{
			Name:            "get by name",
			URL:             collectionsURL + "/posts",
			Admin:           true,
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"name":"posts"`, `"title"`},
		},
		{
			Name: "get by id",
			BeforeFunc: func(t testing.TB, s *apitest.Server) {
				out := s.MustAdmin(t, http.StatusOK, http.MethodGet, collectionsURL+"/"+postsID, nil)
				if apitest.Obj(t, out["data"])["name"] != "posts" {
					t.Errorf("by id: %v", out)
				}
			},
			URL:            collectionsURL + "/posts",
			Admin:          true,
			ExpectedStatus: http.StatusOK,
		},
		{
			Name:           "get unknown is 404",
			URL:            collectionsURL + "/nope",
			Admin:          true,
			ExpectedStatus: http.StatusNotFound,
		},
		{
			Name:           "duplicate name is 422 on name",
			Method:         http.MethodPost,
			URL:            collectionsURL,
			Admin:          true,
			Body:           coll("posts", "base", nil),
			ExpectedStatus: http.StatusUnprocessableEntity,
			AfterFunc:      apitest.Details("name"),
		},
		{
			Name:           "duplicate name in another case is 422 on name",
			Method:         http.MethodPost,
			URL:            collectionsURL,
			Admin:          true,
			Body:           coll("POSTS", "base", nil),
			ExpectedStatus: http.StatusUnprocessableEntity,
			AfterFunc:      apitest.Details("name"),
		},
		{
			Name:            "type defaults to base",
			Method:          http.MethodPost,
			URL:             collectionsURL,
			Admin:           true,
			Body:            map[string]any{"name": "notes"},
			ExpectedStatus:  http.StatusCreated,
			ExpectedContent: []string{`"type":"base"`, `"fields":[]`, `"view_rule":null`},
		},
		{
			Name:           "an unknown type is 422 on type",
			Method:         http.MethodPost,
			URL:            collectionsURL,
			Admin:          true,
			Body:           coll("weird", "table", nil),
			ExpectedStatus: http.StatusUnprocessableEntity,
			AfterFunc:      apitest.Details("type"),
		},
		{
			Name:           "malformed JSON is 400",
			Method:         http.MethodPost,
			URL:            collectionsURL,
			Admin:          true,
			Body:           `{"name":`,
			ExpectedStatus: http.StatusBadRequest,
		},
		{
			Name:           "trailing data is 400",
			Method:         http.MethodPost,
			URL:            collectionsURL,
			Admin:          true,
			Body:           `{"name":"a1"} {"name":"a2"}`,
			ExpectedStatus: http.StatusBadRequest,
		},
		{
			Name:      "a body that is not an object is refused (400, or 422 since 2566e63)",
			Method:    http.MethodPost,
			URL:       collectionsURL,
			Admin:     true,
			Body:      `["posts"]`,
			AfterFunc: apitest.StatusIn(http.StatusBadRequest, http.StatusUnprocessableEntity),
		},
		{
			Name:           "a member of the wrong JSON type is 422 on that member",
			Method:         http.MethodPost,
			URL:            collectionsURL,
			Admin:          true,
			Body:           map[string]any{"name": 5},
			ExpectedStatus: http.StatusUnprocessableEntity,
			AfterFunc:      apitest.Details("name"),
		},
	})

	var names []apitest.Scenario
	for _, name := range []string{"", "1posts", "has-dash", "has space", strings.Repeat("a", 64), "émoji"} {
		names = append(names, apitest.Scenario{
			Name:           "bad name " + name,
			Method:         http.MethodPost,
			URL:            collectionsURL,
			Admin:          true,
			Body:           coll(name, "base", nil),
			ExpectedStatus: http.StatusUnprocessableEntity,
			AfterFunc:      apitest.Details("name"),
		})
	}
	for _, name := range []string{"admin", "files", "auth", "batch", "realtime", "collections", "_", "Admin", "_svc_x", "svc_x", "sqlite_x"} {
		names = append(names, apitest.Scenario{
			Name:           "reserved name " + name,
			Method:         http.MethodPost,
			URL:            collectionsURL,
			Admin:          true,
			Body:           coll(name, "base", nil),
			ExpectedStatus: http.StatusUnprocessableEntity,
			AfterFunc:      apitest.Details("name"),
		})
	}
	names = append(names, apitest.Scenario{
		Name:           "a 63-character name is fine",
		Method:         http.MethodPost,
		URL:            collectionsURL,
		Admin:          true,
		Body:           coll("_"+strings.Repeat("a", 62), "base", nil),
		ExpectedStatus: http.StatusCreated,
	})
	names = append(names, apitest.Scenario{
		Name:           "a rule over 4096 characters is 422 on that rule",
		Method:         http.MethodPost,
		URL:            collectionsURL,
		Admin:          true,
		Body:           coll("long_rule", "base", nil, "update_rule", strings.Repeat("x", 4097)),
		ExpectedStatus: http.StatusUnprocessableEntity,
		AfterFunc:      apitest.Details("update_rule"),
	})
	t.Run("names", func(t *testing.T) { apitest.Run(t, s, names) })

	fieldCases := []struct {
		name   string
		fields []map[string]any
		key    string
	}{
		{"unknown field type", []map[string]any{f("a", "string")}, "fields.0"},
		{"field type names are case-sensitive", []map[string]any{f("a", "Text")}, "fields.0"},
		{"select without values", []map[string]any{f("a", "select")}, "fields.0"},
		{"select with a duplicate value", []map[string]any{f("a", "select", "values", []string{"x", "x"})}, "fields.0"},
		{"text min above max", []map[string]any{f("a", "text", "min", 5, "max", 2)}, "fields.0"},
		{"text negative min", []map[string]any{f("a", "text", "min", -1)}, "fields.0"},
		{"text bad pattern", []map[string]any{f("a", "text", "pattern", "(")}, "fields.0"},
		{"number min above max", []map[string]any{f("a", "number", "min", 5, "max", 2)}, "fields.0"},
		{"vector without dimensions", []map[string]any{f("a", "vector")}, "fields.0"},
		{"vector with too many dimensions", []map[string]any{f("a", "vector", "dimensions", 5000)}, "fields.0"},
		{"relation without collection", []map[string]any{f("a", "relation")}, "fields.0"},
		{"relation to a missing collection", []map[string]any{f("a", "relation", "collection", "nope")}, "fields.0"},
		{"relation both cascade and restrict", []map[string]any{f("a", "relation", "collection", "posts", "cascade", true, "restrict", true)}, "fields.0"},
		{"autodate that never fills", []map[string]any{f("a", "autodate")}, "fields.0"},
		{"json negative max_size", []map[string]any{f("a", "json", "max_size", -1)}, "fields.0"},
		{"email with a bad domain list", []map[string]any{f("a", "email", "domains_only", []string{"not a domain"})}, "fields.0"},
		{"file with a bad mime type", []map[string]any{f("a", "file", "mimeTypes", []string{"image"})}, "fields.0"},
		{"bad field name", []map[string]any{f("1a", "text")}, "fields.0"},
		{"system field name id", []map[string]any{f("id", "text")}, "fields.0"},
		{"system field name Created", []map[string]any{f("Created", "text")}, "fields.0"},
		{"system field name collectionName", []map[string]any{f("collectionName", "text")}, "fields.0"},
		{"duplicate field name", []map[string]any{f("a", "text"), f("A", "number")}, "fields.1.name"},
		{"encrypted is not supported yet", []map[string]any{f("a", "text", "encrypted", true)}, "fields.0.encrypted"},
	}
	var fs []apitest.Scenario
	for _, c := range fieldCases {
		fs = append(fs, apitest.Scenario{
			Name:           c.name,
			Method:         http.MethodPost,
			URL:            collectionsURL,
			Admin:          true,
			Body:           coll("c_"+strings.ReplaceAll(c.name, " ", "_"), "base", c.fields),
			ExpectedStatus: http.StatusUnprocessableEntity,
			AfterFunc:      apitest.Details(c.key),
		})
	}
	fs = append(fs, apitest.Scenario{
		Name:   "options that do not apply to a type are refused, each named",
		Method: http.MethodPost,
		URL:    collectionsURL,
		Admin:  true,
		Body: coll("cleaned", "base", []map[string]any{
			f("flag", "bool", "max", 3, "values", []string{"a"}),
			f("n", "number", "pattern", "x", "min", 1),
		}),
		ExpectedStatus: http.StatusUnprocessableEntity,
		ExpectedContent: []string{
			`"fields.0.max":"does not apply to a bool field"`, `"fields.0.values":"does not apply to a bool field"`,
			`"fields.1.pattern":"does not apply to a number field"`,
		},
		NotExpectedContent: []string{`fields.1.min`},
	})
	t.Run("fields", func(t *testing.T) { apitest.Run(t, s, fs) })
}

func TestCollectionDelete(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	authors := s.CreateCollection(t, coll("authors", "base", []map[string]any{f("name", "text")}))
	s.CreateCollection(t, coll("books", "base", []map[string]any{f("author", "relation", "collection", "authors")}))
	s.CreateCollection(t, coll("temp", "base", []map[string]any{f("x", "text")}))
	s.CreateRecord(t, "temp", map[string]any{"x": "gone soon"})

	apitest.Run(t, s, []apitest.Scenario{
		{
			Name:            "a relation target given by name is stored as its id",
			URL:             collectionsURL + "/books",
			Admin:           true,
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"collection":"` + authors["id"].(string) + `"`},
		},
		{
			Name:            "deleting a collection referenced by a relation is 409 with details",
			Method:          http.MethodDelete,
			URL:             collectionsURL + "/authors",
			Admin:           true,
			ExpectedStatus:  http.StatusConflict,
			ExpectedContent: []string{"books.author"},
			AfterFunc:       apitest.Details("books.author"),
		},
		{
			Name:           "the referenced collection is still there",
			URL:            collectionsURL + "/authors",
			Admin:          true,
			ExpectedStatus: http.StatusOK,
		},
		{
			Name:            "delete answers 204 with no body",
			Method:          http.MethodDelete,
			URL:             collectionsURL + "/temp",
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
			Name:           "then the collection is 404",
			URL:            collectionsURL + "/temp",
			Admin:          true,
			ExpectedStatus: http.StatusNotFound,
		},
		{
			Name:           "and its records are 404",
			URL:            "/api/v1/temp",
			Admin:          true,
			ExpectedStatus: http.StatusNotFound,
		},
		{
			Name:           "deleting it again is 404",
			Method:         http.MethodDelete,
			URL:            collectionsURL + "/temp",
			Admin:          true,
			ExpectedStatus: http.StatusNotFound,
		},
		{
			Name:           "delete by id works",
			Method:         http.MethodDelete,
			URL:            collectionsURL + "/books",
			Admin:          true,
			ExpectedStatus: http.StatusNoContent,
		},
		{
			Name:           "once the referrer is gone the target can be deleted",
			Method:         http.MethodDelete,
			URL:            collectionsURL + "/" + authors["id"].(string),
			Admin:          true,
			ExpectedStatus: http.StatusNoContent,
		},
		{
			Name:           "a deleted name can be reused",
			Method:         http.MethodPost,
			URL:            collectionsURL,
			Admin:          true,
			Body:           coll("temp", "base", []map[string]any{f("y", "number")}),
			ExpectedStatus: http.StatusCreated,
		},
		{
			Name:            "and starts empty",
			URL:             "/api/v1/temp",
			Admin:           true,
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"totalItems":0`},
		},
	})
}

func TestCollectionSelfRelation(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	c := s.CreateCollection(t, coll("nodes", "base", []map[string]any{f("parent", "relation", "collection", "nodes")}))
	field := apitest.Obj(t, apitest.List(t, c["fields"])[0])
	if field["collection"] != c["id"] {
		t.Errorf("self relation stored as %v, want %v", field["collection"], c["id"])
	}
	root := s.CreateRecord(t, "nodes", map[string]any{})
	child := s.CreateRecord(t, "nodes", map[string]any{"parent": root["id"]})
	if child["parent"] != root["id"] {
		t.Errorf("child = %v", child)
	}
	s.MustAdmin(t, http.StatusNoContent, http.MethodDelete, collectionsURL+"/nodes", nil)
}
