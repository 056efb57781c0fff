package api_test

import (
	"encoding/json"
	"strings"
	"testing"

	"svcd/api/apitest"
)

// pbUsersBody is the auth collection as PocketBase's SDK creates it:
// only the app's fields, PocketBase adds its system fields.
func pbUsersBody() map[string]any {
	return map[string]any{"name": "users", "type": "auth", "listRule": "id = @request.auth.id", "viewRule": "id = @request.auth.id",
		"createRule": "", "updateRule": "id = @request.auth.id", "deleteRule": nil,
		"fields":       []any{map[string]any{"name": "name", "type": "text", "max": 100}},
		"passwordAuth": map[string]any{"enabled": true, "identityFields": []string{"email"}}}
}

func pbPostsBody() map[string]any {
	return map[string]any{"name": "posts", "type": "base", "listRule": "", "viewRule": "",
		"createRule": "", "updateRule": nil, "deleteRule": nil,
		"fields": []any{
			map[string]any{"name": "title", "type": "text", "required": true, "max": 200},
			map[string]any{"name": "views", "type": "number", "onlyInt": true},
			map[string]any{"name": "tags", "type": "select", "values": []string{"a", "b", "c"}, "maxSelect": 3},
			map[string]any{"name": "author", "type": "relation", "collectionId": "users", "maxSelect": 1},
			map[string]any{"name": "created", "type": "autodate", "onCreate": true},
			map[string]any{"name": "updated", "type": "autodate", "onCreate": true, "onUpdate": true},
		},
		"indexes": []string{"CREATE INDEX `idx_views` ON `posts` (`views`)", "CREATE INDEX `idx_2` ON `posts` (`title`, `views`)"},
	}
}

func pbFieldNames(t testing.TB, body []byte) []string {
	t.Helper()
	var c struct {
		Fields []struct {
			Name string `json:"name"`
		} `json:"fields"`
	}
	if err := json.Unmarshal(body, &c); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range c.Fields {
		out = append(out, f.Name)
	}
	return out
}

// TestPocketBaseCollections: PocketBase's collection routes answer the
// collection JSON PocketBase documents, translate to and from svcd's
// definition, and are the superusers'.
func TestPocketBaseCollections(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	admin := raw(s.AdminToken(t))

	res, body := s.Do(t, "POST", "/api/collections", pbUsersBody(), admin)
	if res.StatusCode != 200 {
		t.Fatalf("create users: %d %s", res.StatusCode, body)
	}
	checkPBShape(t, "collection_auth.json", body)
	if got := strings.Join(pbFieldNames(t, body), ","); got != "id,password,tokenKey,email,emailVisibility,verified,name,created,updated" {
		t.Errorf("auth fields = %s", got)
	}
	userTok := signUpIn(t, s, "users", "one@example.com")

	apitest.Run(t, s, []apitest.Scenario{
		{Name: "a guest: 401", URL: "/api/collections", ExpectedStatus: 401,
			AfterFunc: func(t testing.TB, _ *apitest.Server, body []byte) { checkPBShape(t, "error_401.json", body) }},
		{Name: "a revoked or bad token is a guest: 401", URL: "/api/collections", Headers: raw("not-a-token"), ExpectedStatus: 401,
			ExpectedContent: []string{`"message":"The request requires valid record authorization token."`}},
		// PocketBase's RequireSuperuserAuth is requireAuth("_superusers"):
		// a signed-in record of another collection is a 403 with its message.
		{Name: "a user: 403", URL: "/api/collections", Headers: raw(userTok), ExpectedStatus: 403,
			ExpectedContent: []string{`{"status":403,"message":"The authorized record is not allowed to perform this action.","data":{}}`}},
		{Name: "a user cannot create", Method: "POST", URL: "/api/collections", Body: pbPostsBody(), Headers: raw(userTok), ExpectedStatus: 403},
	})

	res, body = s.Do(t, "POST", "/api/collections", pbPostsBody(), admin)
	if res.StatusCode != 200 {
		t.Fatalf("create posts: %d %s", res.StatusCode, body)
	}
	checkPBShape(t, "collection_base.json", body)
	if notes := strings.Join(res.Header.Values("X-Svc-Compat-Note"), "\n"); !strings.Contains(notes, "composite") {
		t.Errorf("the composite index is not reported: %q", notes)
	}
	posts := apitest.DecodeMap(t, body)
	if got := strings.Join(pbFieldNames(t, body), ","); got != "id,title,views,tags,author,created,updated" {
		t.Errorf("posts fields = %s", got)
	}
	if idx := apitest.List(t, posts["indexes"]); len(idx) != 1 || !strings.Contains(idx[0].(string), "(`views`)") {
		t.Errorf("indexes = %v", idx)
	}
	// The relation names svcd's users collection by id, as PocketBase does.
	users := apitest.DecodeMap(t, mustDo(t, s, 200, "GET", "/api/collections/users", nil, admin))
	for _, f := range apitest.List(t, posts["fields"]) {
		if fm := apitest.Obj(t, f); fm["name"] == "author" && fm["collectionId"] != users["id"] {
			t.Errorf("author.collectionId = %v, want %v", fm["collectionId"], users["id"])
		}
	}

	apitest.Run(t, s, []apitest.Scenario{
		{Name: "view", URL: "/api/collections/posts", Headers: admin, ExpectedStatus: 200,
			AfterFunc: func(t testing.TB, _ *apitest.Server, body []byte) { checkPBShape(t, "collection_base.json", body) }},
		{Name: "view by id", URL: "/api/collections/" + posts["id"].(string), Headers: admin, ExpectedStatus: 200,
			ExpectedContent: []string{`"name":"posts"`}},
		{Name: "list", URL: "/api/collections?sort=name", Headers: admin, ExpectedStatus: 200,
			ExpectedContent: []string{`"totalItems":2`},
			AfterFunc:       func(t testing.TB, _ *apitest.Server, body []byte) { checkPBShape(t, "collections_list.json", body) }},
		{Name: "list sorted by -name", URL: "/api/collections?sort=-name", Headers: admin, ExpectedStatus: 200,
			AfterFunc: func(t testing.TB, _ *apitest.Server, body []byte) {
				items := apitest.List(t, apitest.DecodeMap(t, body)["items"])
				if apitest.Obj(t, items[0])["name"] != "users" {
					t.Errorf("sort=-name: first is %v", apitest.Obj(t, items[0])["name"])
				}
			}},
		{Name: "list with a name filter and paging", URL: "/api/collections?filter=" + "name%3D%27posts%27&perPage=1&page=1", Headers: admin, ExpectedStatus: 200,
			ExpectedContent: []string{`"totalItems":1`, `"perPage":1`, `"name":"posts"`}},
		{Name: "an unsupported collections filter is 400", URL: "/api/collections?filter=name~%27p%27", Headers: admin, ExpectedStatus: 400},
		{Name: "an unknown collection is 404", URL: "/api/collections/nope", Headers: admin, ExpectedStatus: 404,
			AfterFunc: func(t testing.TB, _ *apitest.Server, body []byte) { checkPBShape(t, "error_404.json", body) }},
		{Name: "a bad field type is PocketBase's 400", Method: "POST", URL: "/api/collections", Headers: admin, ExpectedStatus: 400,
			Body:            map[string]any{"name": "bad", "type": "base", "fields": []any{map[string]any{"name": "x", "type": "text", "min": 10, "max": 2}}},
			ExpectedContent: []string{`"status":400`, `"message":"Failed to create collection."`}},
	})

	// A record written through PocketBase's paths, then a rename of its
	// field through PATCH: the field keeps its id, so its values stay.
	rec := apitest.DecodeMap(t, mustDo(t, s, 200, "POST", "/api/collections/posts/records", map[string]any{"title": "hello", "views": 1}, raw(userTok)))
	id := rec["id"].(string)
	// views+ through PocketBase's record path.
	got := apitest.DecodeMap(t, mustDo(t, s, 200, "PATCH", "/api/collections/posts/records/"+id, map[string]any{"views+": 4, "tags+": []string{"b", "a"}, "+tags": "c"}, admin))
	if apitest.Int(t, got["views"]) != 5 || strings.Join(strings.Fields(strings.Trim(strings.ReplaceAll(jsonString(t, got["tags"]), ",", " "), "[]")), " ") != `"c" "b" "a"` {
		t.Errorf("modifiers on PocketBase's path: %v", got)
	}

	fields := apitest.List(t, posts["fields"])
	for _, f := range fields {
		if fm := apitest.Obj(t, f); fm["name"] == "title" {
			fm["name"] = "headline"
		}
	}
	res, body = s.Do(t, "PATCH", "/api/collections/posts", map[string]any{"fields": fields, "listRule": "@request.auth.id != ''"}, admin)
	if res.StatusCode != 200 {
		t.Fatalf("patch posts: %d %s", res.StatusCode, body)
	}
	patched := apitest.DecodeMap(t, body)
	if patched["listRule"] != "@request.auth.id != ''" || patched["viewRule"] != "@request.auth.id != ''" {
		t.Errorf("listRule/viewRule after PATCH of listRule: %v / %v", patched["listRule"], patched["viewRule"])
	}
	if got := strings.Join(pbFieldNames(t, body), ","); got != "id,headline,views,tags,author,created,updated" {
		t.Errorf("fields after the rename = %s", got)
	}
	after := apitest.DecodeMap(t, mustDo(t, s, 200, "GET", "/api/collections/posts/records/"+id, nil, raw(userTok)))
	if after["headline"] != "hello" {
		t.Errorf("the renamed field lost its value: %v", after)
	}

	// A reserved name is renamed and reported; a rule svcd cannot express
	// fails closed (null) and is reported.
	res, body = s.Do(t, "POST", "/api/collections", map[string]any{"name": "files", "type": "base", "listRule": "", "viewRule": "",
		"createRule": "@request.auth.tokenKey != ''", "fields": []any{map[string]any{"name": "n", "type": "text"}}}, admin)
	if res.StatusCode != 200 {
		t.Fatalf("create files: %d %s", res.StatusCode, body)
	}
	c := apitest.DecodeMap(t, body)
	notes := strings.Join(res.Header.Values("X-Svc-Compat-Note"), "\n")
	if c["name"] != "files_pb" || c["createRule"] != nil || !strings.Contains(notes, "files_pb") || !strings.Contains(notes, "tokenKey") {
		t.Errorf("reserved name and tokenKey rule: %v %v; notes %q", c["name"], c["createRule"], notes)
	}

	res, body = s.Do(t, "DELETE", "/api/collections/files_pb", nil, admin)
	if res.StatusCode != 204 || len(body) != 0 {
		t.Fatalf("delete: %d %s", res.StatusCode, body)
	}
	mustDo(t, s, 404, "GET", "/api/collections/files_pb", nil, admin)
}
