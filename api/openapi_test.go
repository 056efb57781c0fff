package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"svcd/api/apitest"
)

// loadOpenAPI fetches the document with headers and loads and validates it
// with kin-openapi, as a client generator would.
func loadOpenAPI(t *testing.T, s *apitest.Server, headers map[string]string) *openapi3.T {
	t.Helper()
	res, body := s.Do(t, http.MethodGet, "/api/v1/openapi.json", nil, headers)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("openapi.json: %d %s", res.StatusCode, body)
	}
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("Content-Type %q", ct)
	}
	doc, err := openapi3.NewLoader().LoadFromData(body)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("validate: %v", err)
	}
	return doc
}

// openapiFixture makes a public collection (with a hidden field and an
// admin-only create), a collection only admins reach, one that signed-in
// users may reach through a filter rule, and the users auth collection.
func openapiFixture(t *testing.T, s *apitest.Server) {
	t.Helper()
	s.CreateCollection(t, usersCollection())
	s.CreateCollection(t, coll("posts", "base", []map[string]any{
		f("title", "text", "required", true, "min", 2, "max", 50),
		f("status", "select", "values", []string{"draft", "published"}),
		f("tags", "select", "values", []string{"a", "b"}, "multiple", true, "max_select", 2),
		f("score", "number", "integer", true, "min", 0, "max", 10),
		f("author", "relation", "collection", "users"),
		f("cover", "file"),
		f("internal_note", "text", "hidden", true),
	}, "view_rule", "", "update_rule", "@request.auth.id != ''", "history_enabled", true))
	s.CreateCollection(t, coll("vault", "base", []map[string]any{f("secret", "text")}))
	s.CreateCollection(t, coll("notes", "base", []map[string]any{f("body", "text")},
		"view_rule", "@request.auth.id != ''", "create_rule", "@request.auth.id != ''"))
}

func TestOpenAPIDocument(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	openapiFixture(t, s)

	t.Run("anonymous callers see the routes and the collections open to everyone", func(t *testing.T) {
		doc := loadOpenAPI(t, s, nil)
		if doc.OpenAPI != "3.0.3" || doc.Info.Title != "svcd API" {
			t.Errorf("openapi %q title %q", doc.OpenAPI, doc.Info.Title)
		}
		for _, p := range []string{"/api/v1/admin/collections", "/api/v1/admin/collections/{name}", "/_/health", "/api/v1/auth/{collection}/login", "/api/v1/custom/{path}", "/api/v1/openapi.json"} {
			if doc.Paths.Find(p) == nil {
				t.Errorf("no path %s", p)
			}
		}
		get := doc.Paths.Find("/api/v1/admin/collections/{name}").Get
		if get == nil || len(get.Parameters) != 1 || get.Parameters[0].Value.Name != "name" || get.Parameters[0].Value.In != "path" {
			t.Fatalf("collection get parameters: %+v", get)
		}
		if len(get.Tags) != 1 || get.Tags[0] != "admin collections" {
			t.Errorf("tags %v", get.Tags)
		}
		for _, name := range []string{"bearerAuth", "apiToken"} {
			if doc.Components.SecuritySchemes[name] == nil {
				t.Errorf("no security scheme %s", name)
			}
		}
		// The generic record routes are replaced by each collection's.
		if doc.Paths.Find("/api/v1/{collection}") != nil {
			t.Error("generic record route listed")
		}
		list := doc.Paths.Find("/api/v1/posts")
		if list == nil || list.Get == nil {
			t.Fatal("no list of posts")
		}
		if list.Post != nil {
			t.Error("create of posts listed though its rule is admin-only")
		}
		var params []string
		for _, p := range list.Get.Parameters {
			params = append(params, p.Value.Name)
		}
		for _, want := range []string{"filter", "sort", "page", "perPage", "expand"} {
			if !strings.Contains(","+strings.Join(params, ",")+",", ","+want+",") {
				t.Errorf("list parameters %v lack %s", params, want)
			}
		}
		item := doc.Paths.Find("/api/v1/posts/{id}")
		if item == nil || item.Get == nil || item.Patch == nil || item.Delete != nil {
			t.Fatalf("posts item operations: %+v", item)
		}
		if h := doc.Paths.Find("/api/v1/posts/{id}/history"); h == nil || h.Get == nil {
			t.Error("history of posts not listed")
		}
		if doc.Paths.Find("/api/v1/posts/{id}/restore") != nil {
			t.Error("restore listed for an anonymous caller")
		}
		rec := doc.Components.Schemas["record_posts"]
		if rec == nil {
			t.Fatal("no record_posts schema")
		}
		props := rec.Value.Properties
		if props["internal_note"] != nil {
			t.Error("hidden field shown to an anonymous caller")
		}
		if title := props["title"].Value; title.MinLength != 2 || title.MaxLength == nil || *title.MaxLength != 50 {
			t.Errorf("title bounds %d..%v", title.MinLength, title.MaxLength)
		}
		if st := props["status"].Value; len(st.Enum) != 2 || st.Enum[0] != "draft" {
			t.Errorf("status enum %v", st.Enum)
		}
		if tags := props["tags"].Value; !tags.Type.Is("array") || tags.MaxItems == nil || *tags.MaxItems != 2 {
			t.Errorf("tags %+v", tags)
		}
		if score := props["score"].Value; !score.Type.Is("integer") || score.Max == nil || *score.Max != 10 {
			t.Errorf("score %+v", score)
		}
		if author := props["author"].Value; author.Description != "id of a record of collection users" {
			t.Errorf("author %+v", author)
		}
		if cover := props["cover"].Value; !strings.Contains(cover.Description, "/api/v1/files/") {
			t.Errorf("cover %+v", cover)
		}
		if in := doc.Components.Schemas["record_posts_input"]; in == nil || !strings.Contains(in.Value.Description, "Required on create: title") {
			t.Errorf("input schema %+v", in)
		}
		for _, hidden := range []string{"record_vault", "record_notes"} {
			if doc.Components.Schemas[hidden] != nil {
				t.Errorf("%s shown to an anonymous caller", hidden)
			}
		}
		if doc.Paths.Find("/api/v1/vault") != nil {
			t.Error("admin-only collection listed")
		}
	})

	t.Run("a signed-in user also sees collections whose rules are filters", func(t *testing.T) {
		tok := signUp(t, s, "openapi-user@example.com")
		doc := loadOpenAPI(t, s, bearer(tok))
		if doc.Components.Schemas["record_notes"] == nil || doc.Paths.Find("/api/v1/notes") == nil {
			t.Error("notes not shown to a user")
		}
		if doc.Components.Schemas["record_vault"] != nil {
			t.Error("admin-only collection shown to a user")
		}
		users := doc.Components.Schemas["record_users"]
		if users == nil || users.Value.Properties["email"] == nil || users.Value.Properties["password"] != nil {
			t.Errorf("users record schema %+v", users)
		}
	})

	t.Run("admins see every collection, hidden fields included", func(t *testing.T) {
		doc := loadOpenAPI(t, s, s.AdminHeaders(t, nil))
		if doc.Components.Schemas["record_vault"] == nil {
			t.Fatal("vault not shown to an admin")
		}
		if doc.Components.Schemas["record_posts"].Value.Properties["internal_note"] == nil {
			t.Error("hidden field not shown to an admin")
		}
		if p := doc.Paths.Find("/api/v1/posts/{id}/restore"); p == nil || p.Post == nil {
			t.Error("restore of posts not listed for an admin")
		}
		if p := doc.Paths.Find("/api/v1/vault"); p == nil || p.Post == nil {
			t.Error("vault create not listed for an admin")
		}
		if p := doc.Paths.Find("/api/v1/admin/settings"); p == nil || p.Patch == nil || len(*p.Patch.Security) != 2 {
			t.Errorf("settings security: %+v", p)
		}
	})
}

func TestOpenAPIDocsEnabled(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	apitest.Run(t, s, []apitest.Scenario{
		{
			Name:            "the reference page is served with its own assets only",
			URL:             "/api/v1/docs",
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{"<title>svcd API reference</title>", `src="docs/app.js"`},
			ExpectedHeaders: map[string]string{
				"Content-Type":            "text/html; charset=utf-8",
				"Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'",
			},
		},
		{
			Name: "its script", URL: "/api/v1/docs/app.js", ExpectedStatus: http.StatusOK,
			ExpectedContent: []string{`fetch("openapi.json"`},
			ExpectedHeaders: map[string]string{"Content-Type": "text/javascript; charset=utf-8"},
		},
		{
			Name: "its style sheet", URL: "/api/v1/docs/app.css", ExpectedStatus: http.StatusOK,
			ExpectedHeaders: map[string]string{"Content-Type": "text/css; charset=utf-8"},
		},
		{Name: "no other asset", URL: "/api/v1/docs/secret.txt", ExpectedStatus: http.StatusNotFound},
		{Name: "no traversal", URL: "/api/v1/docs/..%2fopenapi.go", ExpectedStatus: http.StatusNotFound},
		{
			Name: "docs.enabled off", Method: http.MethodPatch, URL: "/api/v1/admin/settings", Admin: true,
			Body: map[string]any{"docs.enabled": "0"}, ExpectedStatus: http.StatusOK,
		},
		{Name: "then the document is 404", URL: "/api/v1/openapi.json", ExpectedStatus: http.StatusNotFound},
		{Name: "and the page", URL: "/api/v1/docs", ExpectedStatus: http.StatusNotFound},
		{Name: "and its assets", URL: "/api/v1/docs/app.js", ExpectedStatus: http.StatusNotFound},
		{
			Name: "docs.enabled back on", Method: http.MethodPatch, URL: "/api/v1/admin/settings", Admin: true,
			Body: map[string]any{"docs.enabled": "1"}, ExpectedStatus: http.StatusOK,
		},
		{Name: "the document again", URL: "/api/v1/openapi.json", ExpectedStatus: http.StatusOK, ExpectedContent: []string{`"openapi":"3.0.3"`}},
	})
}
