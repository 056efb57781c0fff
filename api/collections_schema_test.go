package api_test

import (
	"fmt"
	"net/http"
	"testing"

	"svcd/api/apitest"
)

func TestAuthCollections(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})

	sc := []apitest.Scenario{
		{
			Name:            "an auth collection keeps its system fields out of fields",
			Method:          http.MethodPost,
			URL:             collectionsURL,
			Admin:           true,
			Body:            coll("users", "auth", []map[string]any{f("nickname", "text")}),
			ExpectedStatus:  http.StatusCreated,
			ExpectedContent: []string{`"type":"auth"`, `"auth_options":{"password":true,"otp":false,"anonymous":false,"mfa":true,"oauth2":true}`},
			AfterFunc: func(t testing.TB, s *apitest.Server, body []byte) {
				c := apitest.Obj(t, apitest.DecodeMap(t, body)["data"])
				fields := apitest.List(t, c["fields"])
				if len(fields) != 1 || apitest.Obj(t, fields[0])["name"] != "nickname" {
					t.Errorf("fields = %v", fields)
				}
			},
		},
		{
			Name:            "auth options given are kept",
			Method:          http.MethodPost,
			URL:             collectionsURL,
			Admin:           true,
			Body:            coll("guests", "auth", nil, "auth_options", map[string]any{"password": true, "anonymous": true}),
			ExpectedStatus:  http.StatusCreated,
			ExpectedContent: []string{`"anonymous":true`, `"password":true`},
		},
		{
			Name:               "a base collection drops auth_options",
			Method:             http.MethodPost,
			URL:                collectionsURL,
			Admin:              true,
			Body:               coll("plain", "base", nil, "auth_options", map[string]any{"password": true}),
			ExpectedStatus:     http.StatusCreated,
			NotExpectedContent: []string{"auth_options"},
		},
		{
			Name:           "the type of a collection cannot change",
			Method:         http.MethodPatch,
			URL:            collectionsURL + "/users",
			Admin:          true,
			Body:           map[string]any{"type": "base"},
			ExpectedStatus: http.StatusUnprocessableEntity,
			AfterFunc:      apitest.Details("type"),
		},
	}
	for _, name := range []string{"email", "Email", "password", "email_verified", "is_anonymous", "password_reset_at"} {
		sc = append(sc, apitest.Scenario{
			Name:           "a custom field named " + name + " is refused",
			Method:         http.MethodPost,
			URL:            collectionsURL,
			Admin:          true,
			Body:           coll("members_"+name, "auth", []map[string]any{f(name, "text")}),
			ExpectedStatus: http.StatusUnprocessableEntity,
			AfterFunc:      apitest.Details("fields.0.name"),
		})
	}
	sc = append(sc, apitest.Scenario{
		Name:           "a base collection may have an email field",
		Method:         http.MethodPost,
		URL:            collectionsURL,
		Admin:          true,
		Body:           coll("contacts", "base", []map[string]any{f("email", "email"), f("password", "password")}),
		ExpectedStatus: http.StatusCreated,
	})
	apitest.Run(t, s, sc)
}

func TestCollectionMigrations(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	c := s.CreateCollection(t, coll("posts", "base", []map[string]any{
		f("title", "text"), f("views", "number"), f("note", "text"),
	}, "view_rule", ""))
	s.CreateCollection(t, coll("other", "base", nil))
	r1 := s.CreateRecord(t, "posts", map[string]any{"title": "a", "views": 42, "note": "17"})
	r2 := s.CreateRecord(t, "posts", map[string]any{"title": "b", "views": 2.5, "note": "abc"})
	r3 := s.CreateRecord(t, "posts", map[string]any{"title": "b"})
	id1, id2, id3 := r1["id"].(string), r2["id"].(string), r3["id"].(string)
	fieldID := map[string]string{}
	for _, fl := range apitest.List(t, c["fields"]) {
		m := apitest.Obj(t, fl)
		fieldID[m["name"].(string)] = m["id"].(string)
	}

	apitest.Run(t, s, []apitest.Scenario{
		{
			Name:           "patch of an unknown collection is 404",
			Method:         http.MethodPatch,
			URL:            collectionsURL + "/nope",
			Admin:          true,
			Body:           map[string]any{"name": "x"},
			ExpectedStatus: http.StatusNotFound,
		},
		{
			Name:           "patch with malformed JSON is 400",
			Method:         http.MethodPatch,
			URL:            collectionsURL + "/posts",
			Admin:          true,
			Body:           `{"name":`,
			ExpectedStatus: http.StatusBadRequest,
		},
		{
			Name:           "rename to a taken name is 422",
			Method:         http.MethodPatch,
			URL:            collectionsURL + "/posts",
			Admin:          true,
			Body:           map[string]any{"name": "Other"},
			ExpectedStatus: http.StatusUnprocessableEntity,
			AfterFunc:      apitest.Details("name"),
		},
		{
			Name:           "rename to a reserved name is 422",
			Method:         http.MethodPatch,
			URL:            collectionsURL + "/posts",
			Admin:          true,
			Body:           map[string]any{"name": "files"},
			ExpectedStatus: http.StatusUnprocessableEntity,
			AfterFunc:      apitest.Details("name"),
		},
		{
			Name:            "rename keeps id, created, fields and records",
			Method:          http.MethodPatch,
			URL:             collectionsURL + "/posts",
			Admin:           true,
			Body:            map[string]any{"name": "articles", "id": "col_ignoredignored1", "created": 1},
			ExpectedStatus:  http.StatusOK,
			ExpectedHeaders: map[string]string{"X-Svc-Index": "*"},
			ExpectedContent: []string{`"id":"` + c["id"].(string) + `"`, `"name":"articles"`, `"created":` + fmt.Sprint(c["created"]), `"view_rule":""`},
		},
		{
			Name:            "the records are there under the new name",
			URL:             "/api/v1/articles",
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"totalItems":3`, `"collectionName":"articles"`, id1, id2, id3},
		},
		{
			Name:            "a record is there under the new name",
			URL:             "/api/v1/articles/" + id1,
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"title":"a"`},
		},
		{
			Name:           "the old name is 404 for records",
			URL:            "/api/v1/posts",
			ExpectedStatus: http.StatusNotFound,
		},
		{
			Name:           "the old name is 404 for the collection",
			URL:            collectionsURL + "/posts",
			Admin:          true,
			ExpectedStatus: http.StatusNotFound,
		},
		{
			Name:            "a change of case alone is a rename too",
			Method:          http.MethodPatch,
			URL:             collectionsURL + "/articles",
			Admin:           true,
			Body:            map[string]any{"name": "Articles"},
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"name":"Articles"`},
		},
		{
			Name:   "retype number to text and text to number, add a field",
			Method: http.MethodPatch,
			URL:    collectionsURL + "/articles",
			Admin:  true,
			Body: map[string]any{"name": "articles", "fields": []map[string]any{
				f("title", "text"), // no id: keeps the id of the same-named field
				f("views", "text", "id", fieldID["views"]),
				f("note", "number", "id", fieldID["note"]),
				f("summary", "text"),
			}},
			ExpectedStatus: http.StatusOK,
			ExpectedContent: []string{
				`"id":"` + fieldID["title"] + `","name":"title"`,
				`"id":"` + fieldID["views"] + `","name":"views","type":"text"`,
				`"id":"` + fieldID["note"] + `","name":"note","type":"number"`,
				`"name":"summary"`,
			},
		},
		{
			Name:            "number to text keeps values as strings",
			URL:             "/api/v1/articles/" + id1,
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"views":"42"`, `"note":17`, `"summary":null`, `"title":"a"`},
		},
		{
			Name:            "fractions survive as text; a non-numeric string becomes null",
			URL:             "/api/v1/articles/" + id2,
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"views":"2.5"`, `"note":null`},
		},
		{
			Name:            "nulls stay null",
			URL:             "/api/v1/articles/" + id3,
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"views":null`, `"note":null`},
		},
		{
			Name:            "new values follow the new types",
			Method:          http.MethodPatch,
			URL:             "/api/v1/articles/" + id3,
			Admin:           true,
			Body:            map[string]any{"views": "many", "note": 5, "summary": "s"},
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"views":"many"`, `"note":5`, `"summary":"s"`},
		},
		{
			Name:           "and old-typed values are refused",
			Method:         http.MethodPatch,
			URL:            "/api/v1/articles/" + id3,
			Admin:          true,
			Body:           map[string]any{"views": 3, "note": "five"},
			ExpectedStatus: http.StatusUnprocessableEntity,
			AfterFunc:      apitest.Details("views", "note"),
		},
		{
			Name:   "renaming a field by id keeps its values",
			Method: http.MethodPatch,
			URL:    collectionsURL + "/articles",
			Admin:  true,
			Body: map[string]any{"fields": []map[string]any{
				f("headline", "text", "id", fieldID["title"]),
				f("views", "text"), f("note", "number"), f("summary", "text"),
			}},
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"id":"` + fieldID["title"] + `","name":"headline"`},
		},
		{
			Name:               "the renamed field has the values",
			URL:                "/api/v1/articles/" + id1,
			ExpectedStatus:     http.StatusOK,
			ExpectedContent:    []string{`"headline":"a"`},
			NotExpectedContent: []string{`"title"`},
		},
		{
			Name:   "removing a field drops its values",
			Method: http.MethodPatch,
			URL:    collectionsURL + "/articles",
			Admin:  true,
			Body: map[string]any{"fields": []map[string]any{
				f("headline", "text"), f("views", "text"), f("note", "number"),
			}},
			ExpectedStatus:     http.StatusOK,
			NotExpectedContent: []string{`"summary"`},
		},
		{
			Name:               "records no longer have it",
			URL:                "/api/v1/articles/" + id3,
			ExpectedStatus:     http.StatusOK,
			NotExpectedContent: []string{`"summary"`},
		},
		{
			Name:   "a field added again under the old name starts empty",
			Method: http.MethodPatch,
			URL:    collectionsURL + "/articles",
			Admin:  true,
			Body: map[string]any{"fields": []map[string]any{
				f("headline", "text"), f("views", "text"), f("note", "number"), f("summary", "text"),
			}},
			ExpectedStatus: http.StatusOK,
			AfterFunc: func(t testing.TB, s *apitest.Server, _ []byte) {
				rec, _ := getRecord(t, s, "articles", id3)
				if rec["summary"] != nil {
					t.Errorf("summary = %v, want null", rec["summary"])
				}
			},
		},
		{
			Name:   "an unknown field id is 422",
			Method: http.MethodPatch,
			URL:    collectionsURL + "/articles",
			Admin:  true,
			Body: map[string]any{"fields": []map[string]any{
				f("headline", "text", "id", "bogus"),
			}},
			ExpectedStatus: http.StatusUnprocessableEntity,
			AfterFunc:      apitest.Details("fields.0.id"),
		},
		{
			Name:   "unique on a column with duplicate values is 422 on that field",
			Method: http.MethodPatch,
			URL:    collectionsURL + "/articles",
			Admin:  true,
			Body: map[string]any{"fields": []map[string]any{
				f("headline", "text", "unique", true), f("views", "text"), f("note", "number"), f("summary", "text"),
			}},
			ExpectedStatus: http.StatusUnprocessableEntity,
			AfterFunc:      apitest.Details("headline"),
		},
		{
			Name:            "the refused change left the schema alone",
			URL:             collectionsURL + "/articles",
			Admin:           true,
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"name":"headline","type":"text","required":false,"unique":false`},
		},
		{
			Name:   "unique on a column with distinct values works",
			Method: http.MethodPatch,
			URL:    collectionsURL + "/articles",
			Admin:  true,
			Body: map[string]any{"fields": []map[string]any{
				f("headline", "text"), f("views", "text", "unique", true), f("note", "number"), f("summary", "text"),
			}},
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"name":"views","type":"text","required":false,"unique":true`},
		},
		{
			Name:           "and is enforced",
			Method:         http.MethodPost,
			URL:            "/api/v1/articles",
			Admin:          true,
			Body:           map[string]any{"views": "42"},
			ExpectedStatus: http.StatusUnprocessableEntity,
			AfterFunc:      apitest.Details("views"),
		},
		{
			Name:            "rules can change",
			Method:          http.MethodPatch,
			URL:             collectionsURL + "/articles",
			Admin:           true,
			Body:            map[string]any{"view_rule": nil, "create_rule": ""},
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"view_rule":null`, `"create_rule":""`},
		},
		{
			Name:           "and apply at once",
			URL:            "/api/v1/articles",
			ExpectedStatus: http.StatusForbidden,
		},
	})
}

// TestCollectionFieldSwapAndConvert: two fields swap names in one PATCH
// (matched by id), and bool to number keeps the value.
func TestCollectionFieldSwapAndConvert(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	c := s.CreateCollection(t, coll("pairs", "base", []map[string]any{f("a", "text"), f("b", "text"), f("flag", "bool")}))
	ids := map[string]string{}
	for _, fl := range apitest.List(t, c["fields"]) {
		m := apitest.Obj(t, fl)
		ids[m["name"].(string)] = m["id"].(string)
	}
	id := s.CreateRecord(t, "pairs", map[string]any{"a": "first", "b": "second", "flag": true})["id"].(string)
	other := s.CreateRecord(t, "pairs", map[string]any{"a": "x", "flag": false})["id"].(string)
	s.MustAdmin(t, http.StatusOK, http.MethodPatch, collectionsURL+"/pairs", map[string]any{"fields": []map[string]any{
		f("b", "text", "id", ids["a"]),
		f("a", "text", "id", ids["b"]),
		f("flag", "number", "id", ids["flag"]),
	}})
	apitest.Run(t, s, []apitest.Scenario{
		{
			Name:            "the values follow their fields",
			URL:             "/api/v1/pairs/" + id,
			Admin:           true,
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"b":"first"`, `"a":"second"`, `"flag":1`},
		},
		{
			Name:            "false becomes 0",
			URL:             "/api/v1/pairs/" + other,
			Admin:           true,
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"b":"x"`, `"a":null`, `"flag":0`},
		},
	})
}
