package api_test

import (
	"net/http"
	"testing"

	"svcd/api/apitest"
)

func TestViewCollections(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, coll("posts", "base", []map[string]any{f("title", "text"), f("views", "number")}))
	p := s.CreateRecord(t, "posts", map[string]any{"title": "hello", "views": 3})
	s.CreateRecord(t, "posts", map[string]any{"title": "world", "views": 7})
	pid := p["id"].(string)

	apitest.Run(t, s, []apitest.Scenario{
		{
			Name:   "a view with a valid query has its fields inferred",
			Method: http.MethodPost,
			URL:    collectionsURL,
			Admin:  true,
			Body: map[string]any{
				"name": "popular", "type": "view", "view_rule": "",
				"view_query": "SELECT id, title, views FROM posts WHERE views > 5",
				// Write rules of a view are dropped.
				"create_rule": "", "update_rule": "", "delete_rule": "",
			},
			ExpectedStatus: http.StatusCreated,
			ExpectedContent: []string{
				`"type":"view"`, `"view_query":"SELECT id, title, views FROM posts WHERE views \u003e 5"`,
				`"name":"title","type":"text"`, `"name":"views","type":"number"`,
				`"create_rule":null`, `"update_rule":null`, `"delete_rule":null`,
			},
		},
		{
			Name:               "the view lists the rows of its query",
			URL:                "/api/v1/popular",
			ExpectedStatus:     http.StatusOK,
			ExpectedContent:    []string{`"title":"world"`, `"views":7`, `"totalItems":1`, `"collectionName":"popular"`},
			NotExpectedContent: []string{`"hello"`, `"created"`},
		},
		{
			Name:           "a row outside the query is 404 on the view",
			URL:            "/api/v1/popular/" + pid,
			ExpectedStatus: http.StatusNotFound,
		},
		{
			Name:           "create on a view is 405",
			Method:         http.MethodPost,
			URL:            "/api/v1/popular",
			Admin:          true,
			Body:           map[string]any{"title": "x"},
			ExpectedStatus: http.StatusMethodNotAllowed,
		},
		{
			Name:           "update on a view is 405",
			Method:         http.MethodPatch,
			URL:            "/api/v1/popular/" + pid,
			Admin:          true,
			Body:           map[string]any{"title": "x"},
			ExpectedStatus: http.StatusMethodNotAllowed,
		},
		{
			Name:           "delete on a view is 405",
			Method:         http.MethodDelete,
			URL:            "/api/v1/popular/" + pid,
			Admin:          true,
			ExpectedStatus: http.StatusMethodNotAllowed,
		},
		{
			Name:           "writes on a view are 405 through the legacy URL too",
			Method:         http.MethodPost,
			URL:            "/api/collections/popular/records",
			Admin:          true,
			Body:           map[string]any{},
			ExpectedStatus: http.StatusMethodNotAllowed,
		},
		{
			Name:   "a view keeps created and updated when its query yields them",
			Method: http.MethodPost,
			URL:    collectionsURL,
			Admin:  true,
			Body: map[string]any{
				"name": "all_posts", "type": "view", "view_rule": "",
				"view_query": "SELECT id, created, updated, upper(title) AS shout FROM posts;",
			},
			ExpectedStatus:     http.StatusCreated,
			NotExpectedContent: []string{`"name":"created"`, `"name":"id"`},
			ExpectedContent:    []string{`"name":"shout"`},
		},
		{
			Name:            "its records carry created and updated",
			URL:             "/api/v1/all_posts/" + pid,
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"shout":"HELLO"`, `"created":`, `"updated":`},
		},
	})

	bad := []struct{ name, query, key string }{
		{"an invalid query", "SELECT FROM WHERE", "view_query"},
		{"a query on a missing table", "SELECT id FROM nowhere", "view_query"},
		{"a query without an id column", "SELECT title FROM posts", "view_query"},
		{"a blank query", "  ", "view_query"},
		{"a query reading the admins table", "SELECT id, email, password FROM _svc_admins", "view_query"},
		{"a query reading internal tables in another case", "SELECT id FROM _SVC_Collections", "view_query"},
		{"a query reading sqlite_schema", "SELECT name AS id FROM sqlite_schema", "view_query"},
		{"a query that is not a SELECT", "DELETE FROM posts", "view_query"},
		{"two statements", "SELECT id FROM posts; SELECT id FROM posts", "view_query"},
		{"a duplicate column", "SELECT id, title, title FROM posts", "view_query"},
		{"a column with a reserved name", "SELECT id, title AS collectionName FROM posts", "view_query"},
	}
	var sc []apitest.Scenario
	for _, b := range bad {
		sc = append(sc, apitest.Scenario{
			Name:           b.name + " is 422 on view_query",
			Method:         http.MethodPost,
			URL:            collectionsURL,
			Admin:          true,
			Body:           map[string]any{"name": "v_bad", "type": "view", "view_query": b.query},
			ExpectedStatus: http.StatusUnprocessableEntity,
			AfterFunc:      apitest.Details(b.key),
		})
	}
	sc = append(sc,
		apitest.Scenario{
			Name:           "a base collection with a view_query is 422",
			Method:         http.MethodPost,
			URL:            collectionsURL,
			Admin:          true,
			Body:           map[string]any{"name": "b_bad", "type": "base", "view_query": "SELECT id FROM posts"},
			ExpectedStatus: http.StatusUnprocessableEntity,
			AfterFunc:      apitest.Details("view_query"),
		},
		apitest.Scenario{
			Name:            "a relation may not target a view",
			Method:          http.MethodPost,
			URL:             collectionsURL,
			Admin:           true,
			Body:            coll("refs", "base", []map[string]any{f("p", "relation", "collection", "popular")}),
			ExpectedStatus:  http.StatusUnprocessableEntity,
			ExpectedContent: []string{`"details":{"fields.0`, "view"},
		},
		apitest.Scenario{
			Name:            "the posts table is intact after the refused queries",
			URL:             "/api/v1/posts",
			Admin:           true,
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"totalItems":2`},
		},
		apitest.Scenario{
			Name:               "changing a view's query re-infers its fields",
			Method:             http.MethodPatch,
			URL:                collectionsURL + "/popular",
			Admin:              true,
			Body:               map[string]any{"view_query": "SELECT id, views * 2 AS double FROM posts"},
			ExpectedStatus:     http.StatusOK,
			ExpectedContent:    []string{`"name":"double"`},
			NotExpectedContent: []string{`"name":"title"`},
		},
		apitest.Scenario{
			Name:            "and its records follow",
			URL:             "/api/v1/popular?sort=double",
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"totalItems":2`, `"double":6`, `"double":14`},
		},
		apitest.Scenario{
			Name:           "a view's query cannot be made invalid",
			Method:         http.MethodPatch,
			URL:            collectionsURL + "/popular",
			Admin:          true,
			Body:           map[string]any{"view_query": "SELECT nothing"},
			ExpectedStatus: http.StatusUnprocessableEntity,
			AfterFunc:      apitest.Details("view_query"),
		},
	)
	t.Run("invalid", func(t *testing.T) { apitest.Run(t, s, sc) })
}

// TestViewNeverEmitsPasswordHashes: SPEC.md "Password fields and
// auth-private columns are never emitted". A view over an auth collection
// must not turn the password hash into a plain text field.
func TestViewNeverEmitsPasswordHashes(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, coll("users", "auth", nil))
	s.CreateRecord(t, "users", map[string]any{"email": "u@example.com", "password": "a-very-long-password"})
	res, body := s.AdminDo(t, http.MethodPost, collectionsURL, map[string]any{
		"name": "leak", "type": "view", "view_rule": "",
		"view_query": "SELECT id, email, password, password_reset_at FROM users",
	})
	if res.StatusCode == http.StatusUnprocessableEntity {
		return // refusing such a view is a fine answer too
	}
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("create view: %d %s", res.StatusCode, body)
	}
	apitest.Scenario{
		URL:                "/api/v1/leak",
		ExpectedStatus:     http.StatusOK,
		ExpectedContent:    []string{`"email":"u@example.com"`},
		NotExpectedContent: []string{`$argon2id$`, `"password"`},
	}.Test(t, s)
}

// TestViewDependencies: deleting or renaming the collection a view reads
// must not leave a view that answers 500 or that can no longer be edited.
func TestViewDependencies(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, coll("src", "base", []map[string]any{f("a", "text")}))
	s.CreateRecord(t, "src", map[string]any{"a": "x"})
	s.CreateCollection(t, map[string]any{"name": "v", "type": "view", "view_query": "SELECT id, a FROM src"})
	s.CreateCollection(t, coll("src2", "base", []map[string]any{f("a", "text")}))
	s.CreateCollection(t, map[string]any{"name": "v2", "type": "view", "view_query": "SELECT id, a FROM src2"})

	t.Run("dropping a column a view reads is refused", func(t *testing.T) {
		apitest.Scenario{
			Method:         http.MethodPatch,
			URL:            collectionsURL + "/src",
			Admin:          true,
			Body:           map[string]any{"fields": []any{f("b", "text")}},
			ExpectedStatus: http.StatusUnprocessableEntity,
			AfterFunc:      apitest.Details("a"),
		}.Test(t, s)
	})

	t.Run("renaming the source keeps the view editable", func(t *testing.T) {
		s.MustAdmin(t, http.StatusOK, http.MethodPatch, collectionsURL+"/src", map[string]any{"name": "renamed"})
		apitest.Scenario{
			URL:             "/api/v1/v",
			Admin:           true,
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"a":"x"`},
		}.Test(t, s)
		// The stored view_query still names "src": editing the view's rule
		// re-creates it from that text.
		apitest.Scenario{
			Method:         http.MethodPatch,
			URL:            collectionsURL + "/v",
			Admin:          true,
			Body:           map[string]any{"view_rule": ""},
			ExpectedStatus: http.StatusOK,
		}.Test(t, s)
	})

	t.Run("deleting the source does not break the view", func(t *testing.T) {
		res, body := s.AdminDo(t, http.MethodDelete, collectionsURL+"/src2", nil)
		apitest.CheckCommon(t, res, body)
		if res.StatusCode == http.StatusConflict {
			return // refusing the delete is a fine answer
		}
		res, body = s.AdminDo(t, http.MethodGet, "/api/v1/v2", nil)
		apitest.CheckCommon(t, res, body)
		if res.StatusCode >= 500 {
			t.Errorf("the source's delete answered 204, and then listing the view answers %d: %s", res.StatusCode, body)
		}
	})
}

// TestViewRecordETag: a view without an updated column must not answer 304
// to If-None-Match after its row changed.
func TestViewRecordETag(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, coll("posts", "base", []map[string]any{f("title", "text")}))
	id := s.CreateRecord(t, "posts", map[string]any{"title": "before"})["id"].(string)
	s.CreateCollection(t, map[string]any{"name": "titles", "type": "view", "view_rule": "", "view_query": "SELECT id, title FROM posts"})
	res, body := s.Do(t, http.MethodGet, "/api/v1/titles/"+id, nil, nil)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("get: %d %s", res.StatusCode, body)
	}
	etag := res.Header.Get("ETag")
	s.MustAdmin(t, http.StatusOK, http.MethodPatch, "/api/v1/posts/"+id, map[string]any{"title": "after"})
	apitest.Scenario{
		URL:             "/api/v1/titles/" + id,
		Headers:         map[string]string{"If-None-Match": etag},
		ExpectedStatus:  http.StatusOK,
		ExpectedContent: []string{`"title":"after"`},
	}.Test(t, s)
}

// TestViewCollectionDelete: a view collection can be deleted; the check
// that refuses deleting a collection other views read must not count the
// view being deleted.
func TestViewCollectionDelete(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, coll("posts", "base", []map[string]any{f("title", "text")}))
	s.CreateCollection(t, map[string]any{"name": "v", "type": "view", "view_query": "SELECT id, title FROM posts"})
	apitest.Run(t, s, []apitest.Scenario{
		{
			Name:           "delete the view",
			Method:         http.MethodDelete,
			URL:            collectionsURL + "/v",
			Admin:          true,
			ExpectedStatus: http.StatusNoContent,
		},
		{
			Name:           "then its source can be deleted too",
			Method:         http.MethodDelete,
			URL:            collectionsURL + "/posts",
			Admin:          true,
			ExpectedStatus: http.StatusNoContent,
		},
	})
}

// TestViewFollowsColumnRename: renaming a column a view reads rewrites the
// view in SQLite; the view collection follows (its query and its fields),
// so its records keep showing the values, not the old column's name.
func TestViewFollowsColumnRename(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, coll("items", "base", []map[string]any{f("label", "text")}))
	s.CreateRecord(t, "items", map[string]any{"label": "hello"})
	v := coll("item_view", "view", nil)
	v["view_query"] = "SELECT id, label FROM items"
	v["view_rule"] = ""
	s.CreateCollection(t, v)
	_, items := s.AdminDo(t, http.MethodGet, "/api/v1/admin/collections/items", nil)
	fields := apitest.DecodeMap(t, items)["data"].(map[string]any)["fields"].([]any)
	fields[0].(map[string]any)["name"] = "title"
	s.MustAdmin(t, http.StatusOK, http.MethodPatch, "/api/v1/admin/collections/items", map[string]any{"fields": fields})
	apitest.Scenario{
		URL: "/api/v1/item_view", ExpectedStatus: http.StatusOK,
		ExpectedContent:    []string{`"hello"`},
		NotExpectedContent: []string{`"label":"label"`, `"title":"title"`},
	}.Test(t, s)
}

// TestViewRefusesPragmaFunctions: table-valued pragma functions would
// describe internal tables; a view may not use them.
func TestViewRefusesPragmaFunctions(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	v := coll("pragmas", "view", nil)
	v["view_query"] = "SELECT name AS id FROM pragma_table_info('_svc_admins')"
	apitest.Scenario{
		Method: http.MethodPost, URL: "/api/v1/admin/collections", Admin: true, Body: v,
		ExpectedStatus: http.StatusUnprocessableEntity, ExpectedContent: []string{"view_query"},
	}.Test(t, s)
}

// TestAuthOptionsPatchKeepsOthers: a PATCH of one auth option keeps the
// current value of the others.
func TestAuthOptionsPatchKeepsOthers(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	c := coll("members", "auth", nil)
	c["auth_options"] = map[string]any{"mfa": false}
	s.CreateCollection(t, c)
	s.MustAdmin(t, http.StatusOK, http.MethodPatch, "/api/v1/admin/collections/members",
		map[string]any{"auth_options": map[string]any{"otp": true}})
	apitest.Scenario{
		URL: "/api/v1/admin/collections/members", Admin: true, ExpectedStatus: http.StatusOK,
		ExpectedContent: []string{`"auth_options":{"password":true,"otp":true,"anonymous":false,"mfa":false,"oauth2":true}`},
	}.Test(t, s)
}
