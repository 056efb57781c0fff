package api_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"svcd/api/apitest"
)

// pbPosts is the collection of the PocketBase scenarios: every field type
// whose blank value PocketBase spells differently from svcd's null.
func pbPosts(rules ...any) map[string]any {
	return coll("posts", "base", []map[string]any{
		f("title", "text", "required", true), f("views", "number"), f("tags", "select", "values", []string{"a", "b"}, "multiple", true),
		f("published", "date"), f("author", "relation", "collection", "users"),
	}, rules...)
}

// raw is PocketBase's SDK header form: the token without "Bearer ".
func raw(tok string) map[string]string { return map[string]string{"Authorization": tok} }

// TestPocketBaseRecords: PocketBase's record CRUD on /api/collections/:c/records
// answers the shapes PocketBase documents (testdata/shapes), with
// PocketBase's rule semantics, over the same engine as /api/v1.
func TestPocketBaseRecords(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, coll("users", "auth", []map[string]any{f("name", "text")},
		"create_rule", "", "view_rule", "", "update_rule", "id = @request.auth.id"))
	userTok := signUpIn(t, s, "users", "one@example.com")
	otherTok := signUpIn(t, s, "users", "two@example.com")
	s.CreateCollection(t, pbPosts("view_rule", "", "create_rule", "", "update_rule", "author = @request.auth.id"))
	const base = "/api/collections/posts/records"
	me := apitest.DecodeMap(t, mustDo(t, s, http.StatusOK, "GET", "/api/v1/auth/me", nil, bearer(userTok)))
	uid := apitest.Obj(t, me["data"])["id"].(string)

	var first, second string
	apitest.Run(t, s, []apitest.Scenario{
		{
			Name: "anonymous create (create rule \"\"): 200 and PocketBase's record", Method: http.MethodPost, URL: base,
			Body: map[string]any{"title": "first"}, ExpectedStatus: http.StatusOK,
			AfterFunc: func(t testing.TB, s *apitest.Server, body []byte) {
				checkPBShape(t, "view.json", body)
				first = apitest.DecodeMap(t, body)["id"].(string)
			},
		},
		{
			Name: "create with the SDK's raw token, a date string and expand", Method: http.MethodPost, URL: base + "?expand=author",
			Headers:        raw(userTok),
			Body:           map[string]any{"title": "second", "views": 3, "tags": []string{"a"}, "published": "2024-01-02 10:00:00.000Z", "author": uid},
			ExpectedStatus: http.StatusOK,
			// The author is the caller: the expanded record shows its
			// email to its owner.
			ExpectedContent: []string{`"published":"2024-01-02 10:00:00.000Z"`, `"collectionName":"users"`, `"email":"one@example.com"`},
			AfterFunc: func(t testing.TB, s *apitest.Server, body []byte) {
				second = apitest.DecodeMap(t, body)["id"].(string)
			},
		},
		{
			Name: "a validation failure is PocketBase's 400", Method: http.MethodPost, URL: base,
			Body: map[string]any{"views": 1}, ExpectedStatus: http.StatusBadRequest,
			AfterFunc: func(t testing.TB, s *apitest.Server, body []byte) { checkPBShape(t, "error_create_400.json", body) },
		},
	})
	apitest.Run(t, s, []apitest.Scenario{
		{
			Name: "expand for a guest: the author without its email", URL: base + "/" + second + "?expand=author",
			ExpectedStatus: http.StatusOK,
			AfterFunc:      func(t testing.TB, s *apitest.Server, body []byte) { checkPBShape(t, "view_expand.json", body) },
		},
		{
			Name: "list: PocketBase's page, oldest first without sort", URL: base,
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"page":1`, `"perPage":30`, `"totalItems":2`, `"totalPages":1`},
			AfterFunc: func(t testing.TB, s *apitest.Server, body []byte) {
				checkPBShape(t, "list.json", body)
				// PocketBase's insertion order, to svcd's second: created,
				// then id for records of the same second.
				var l struct {
					Items []struct{ ID, Created string } `json:"items"`
				}
				if err := json.Unmarshal(body, &l); err != nil || len(l.Items) != 2 {
					t.Fatalf("list %s: %v", body, err)
				}
				a, b := l.Items[0], l.Items[1]
				if a.Created > b.Created || a.Created == b.Created && a.ID > b.ID {
					t.Errorf("default order: %+v before %+v", a, b)
				}
			},
		},
		{
			Name: "skipTotal: -1 totals", URL: base + "?skipTotal=1&sort=-created,-id&perPage=1",
			ExpectedStatus: http.StatusOK, ExpectedContent: []string{`"perPage":1`},
			AfterFunc: func(t testing.TB, s *apitest.Server, body []byte) { checkPBShape(t, "list_skiptotal.json", body) },
		},
		{
			Name: "perPage above svcd's cap answers the size used", URL: base + "?perPage=1000&skipTotal=1",
			ExpectedStatus: http.StatusOK, ExpectedContent: []string{`"perPage":500`},
		},
		{
			Name: "filter and @rowid sort", URL: base + "?filter=" + url.QueryEscape(`views > 1 && published >= "2024-01-01 00:00:00.000Z"`) + "&sort=-@rowid",
			ExpectedStatus: http.StatusOK, ExpectedContent: []string{`"totalItems":1`, `"title":"second"`},
		},
		{
			Name: "a bad filter is PocketBase's 400", URL: base + "?filter=" + url.QueryEscape("(("),
			ExpectedStatus: http.StatusBadRequest,
			AfterFunc:      func(t testing.TB, s *apitest.Server, body []byte) { checkPBShape(t, "error_filter_400.json", body) },
		},
		{
			Name: "fields with :excerpt", URL: base + "/" + second + "?fields=" + url.QueryEscape("id,title:excerpt(3,true)"),
			ExpectedStatus: http.StatusOK, ExpectedContent: []string{`"title":"sec..."`}, NotExpectedContent: []string{`"views"`},
		},
		{
			Name: "fields=* is every field", URL: base + "?fields=*",
			ExpectedStatus: http.StatusOK, ExpectedContent: []string{`"views":3`, `"collectionName":"posts"`},
		},
		{
			Name: "a bad token is a guest, not a 401", URL: base + "/" + first, Headers: raw("not-a-token"),
			ExpectedStatus: http.StatusOK,
			AfterFunc:      func(t testing.TB, s *apitest.Server, body []byte) { checkPBShape(t, "view.json", body) },
		},
		{
			Name: "the owner updates (Bearer form too)", Method: http.MethodPatch, URL: base + "/" + second,
			Headers: bearer(userTok), Body: map[string]any{"views": 4}, ExpectedStatus: http.StatusOK,
			ExpectedContent: []string{`"views":4`}, ExpectedHeaders: map[string]string{"X-Svc-Index": "*", "ETag": "*"},
		},
		{
			Name: "an update blanking a required field is PocketBase's 400", Method: http.MethodPatch, URL: base + "/" + second,
			Headers: raw(userTok), Body: map[string]any{"title": ""}, ExpectedStatus: http.StatusBadRequest,
			AfterFunc: func(t testing.TB, s *apitest.Server, body []byte) { checkPBShape(t, "error_update_400.json", body) },
		},
		{
			Name: "an update the rule refuses is a 404 (PocketBase looks it up through the rule)", Method: http.MethodPatch, URL: base + "/" + second,
			Headers: raw(otherTok), Body: map[string]any{"views": 9}, ExpectedStatus: http.StatusNotFound,
			AfterFunc: func(t testing.TB, s *apitest.Server, body []byte) { checkPBShape(t, "error_404.json", body) },
		},
		{
			Name: "a null delete rule is 403 Only superusers", Method: http.MethodDelete, URL: base + "/" + second,
			Headers: raw(userTok), ExpectedStatus: http.StatusForbidden,
			AfterFunc: func(t testing.TB, s *apitest.Server, body []byte) { checkPBShape(t, "error_403.json", body) },
		},
		{
			Name: "an unknown record is PocketBase's 404", URL: base + "/nope", ExpectedStatus: http.StatusNotFound,
			AfterFunc: func(t testing.TB, s *apitest.Server, body []byte) { checkPBShape(t, "error_404.json", body) },
		},
		{
			Name: "an unknown collection is PocketBase's 404", URL: "/api/collections/nope/records", ExpectedStatus: http.StatusNotFound,
			AfterFunc: func(t testing.TB, s *apitest.Server, body []byte) { checkPBShape(t, "error_404.json", body) },
		},
		{
			Name: "the superuser deletes: 204", Method: http.MethodDelete, URL: base + "/" + first, Admin: true,
			ExpectedStatus: http.StatusNoContent,
		},
		{
			Name: "gone through /api/v1 too", URL: "/api/v1/posts/" + first, ExpectedStatus: http.StatusNotFound,
		},
	})
}

// TestPocketBaseAuthRecords: auth records answer verified and
// emailVisibility, and the email only to the owner and superusers; a
// sign-up through the records path needs passwordConfirm.
func TestPocketBaseAuthRecords(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, coll("users", "auth", []map[string]any{f("name", "text")}, "create_rule", "", "view_rule", ""))
	const base = "/api/collections/users/records"
	pw := userPassword
	var id string
	apitest.Run(t, s, []apitest.Scenario{
		{
			Name: "passwordConfirm must match", Method: http.MethodPost, URL: base,
			Body:            map[string]any{"email": "a@example.com", "password": pw, "passwordConfirm": pw + "x", "name": "N"},
			ExpectedStatus:  http.StatusBadRequest,
			ExpectedContent: []string{`"message":"Failed to create record."`, `"passwordConfirm":{"code":"validation_values_mismatch"`},
		},
		{
			Name: "sign-up through the records path", Method: http.MethodPost, URL: base,
			Body:               map[string]any{"email": "a@example.com", "password": pw, "passwordConfirm": pw, "name": "N", "emailVisibility": true},
			ExpectedStatus:     http.StatusOK,
			NotExpectedContent: []string{"password", "email_verified", "is_anonymous"},
			AfterFunc: func(t testing.TB, s *apitest.Server, body []byte) {
				id = apitest.DecodeMap(t, body)["id"].(string)
			},
		},
	})
	tok := login(t, s, "a@example.com", pw)
	other := signUpIn(t, s, "users", "b@example.com")
	apitest.Run(t, s, []apitest.Scenario{
		{
			Name: "the owner sees the email", URL: base + "/" + id, Headers: raw(tok), ExpectedStatus: http.StatusOK,
			ExpectedContent: []string{`"email":"a@example.com"`, `"verified":false`},
			AfterFunc:       func(t testing.TB, s *apitest.Server, body []byte) { checkPBShape(t, "auth_record_owner.json", body) },
		},
		{
			Name: "a superuser sees the email", URL: base + "/" + id, Admin: true, ExpectedStatus: http.StatusOK,
			ExpectedContent: []string{`"email":"a@example.com"`},
		},
		{
			Name: "another user does not", URL: base + "/" + id, Headers: raw(other), ExpectedStatus: http.StatusOK,
			NotExpectedContent: []string{"a@example.com"}, ExpectedContent: []string{`"emailVisibility":false`},
		},
	})
}

// TestPocketBaseHealthAndSwitch: /api/health has PocketBase's answer,
// pocketbase.aliases names collections, and pocketbase.enabled=0 takes
// every PocketBase path away (404) at once.
func TestPocketBaseHealthAndSwitch(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, public(coll("notes", "base", []map[string]any{f("title", "text")})))
	apitest.Run(t, s, []apitest.Scenario{
		{
			Name: "health", URL: "/api/health", ExpectedStatus: http.StatusOK,
			AfterFunc: func(t testing.TB, s *apitest.Server, body []byte) { checkPBShape(t, "health.json", body) },
		},
		{
			Name: "health for a superuser", URL: "/api/health", Admin: true, ExpectedStatus: http.StatusOK,
			AfterFunc: func(t testing.TB, s *apitest.Server, body []byte) { checkPBShape(t, "health_superuser.json", body) },
		},
	})
	// pocketbase.aliases: a PocketBase id an import replaced still names
	// the collection.
	s.MustAdmin(t, http.StatusOK, "PATCH", settingsURL, map[string]any{"pocketbase.aliases": `{"pbc_1234567890":"notes"}`})
	mustDo(t, s, http.StatusOK, "GET", "/api/collections/pbc_1234567890/records", nil, nil)
	mustDo(t, s, http.StatusNotFound, "GET", "/api/collections/pbc_0000000000/records", nil, nil)
	s.MustAdmin(t, http.StatusOK, "PATCH", settingsURL, map[string]any{"pocketbase.enabled": "0"})
	for _, path := range []string{"/api/health", "/api/collections/notes/records", "/api/collections/notes/records/x", "/api/nope"} {
		res, body := s.Do(t, http.MethodGet, path, nil, nil)
		if res.StatusCode != http.StatusNotFound || !strings.Contains(string(body), `"error":"The requested resource wasn't found"`) {
			t.Errorf("GET %s with the layer off: %d %s", path, res.StatusCode, body)
		}
	}
	mustDo(t, s, http.StatusOK, "GET", "/api/v1/notes", nil, nil)
	s.MustAdmin(t, http.StatusOK, "PATCH", settingsURL, map[string]any{"pocketbase.enabled": "1"})
	mustDo(t, s, http.StatusOK, "GET", "/api/collections/notes/records", nil, nil)
}

// TestPocketBaseRecordScopes: API tokens keep their collection scopes on
// PocketBase's paths.
func TestPocketBaseRecordScopes(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, coll("posts", "base", []map[string]any{f("title", "text")}))
	s.CreateCollection(t, coll("notes", "base", []map[string]any{f("title", "text")}))
	id := s.CreateRecord(t, "posts", map[string]any{"title": "x"})["id"].(string)
	tok := mintToken(t, s, "collection:posts:read")
	apitest.Run(t, s, []apitest.Scenario{
		{Name: "in scope", URL: "/api/collections/posts/records/" + id, Headers: raw(tok), ExpectedStatus: http.StatusOK},
		{Name: "write out of scope", Method: http.MethodPatch, URL: "/api/collections/posts/records/" + id, Headers: raw(tok),
			Body: map[string]any{"title": "y"}, ExpectedStatus: http.StatusForbidden, ExpectedContent: []string{"Insufficient token scope"}},
		{Name: "another collection", URL: "/api/collections/notes/records", Headers: raw(tok), ExpectedStatus: http.StatusForbidden},
	})
}

// signUpIn registers email in the auth collection c and signs in.
func signUpIn(t testing.TB, s *apitest.Server, c, email string) string {
	t.Helper()
	mustDo(t, s, http.StatusCreated, "POST", "/api/v1/auth/"+c+"/register", map[string]any{"email": email, "password": userPassword, "name": "N"}, nil)
	res, body := s.Do(t, http.MethodPost, "/api/v1/auth/"+c+"/login", map[string]any{"email": email, "password": userPassword}, nil)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("login %s: %d %s", email, res.StatusCode, body)
	}
	return apitest.Obj(t, apitest.DecodeMap(t, body)["data"])["token"].(string)
}

func mustDo(t testing.TB, s *apitest.Server, want int, method, path string, body any, h map[string]string) []byte {
	t.Helper()
	res, out := s.Do(t, method, path, body, h)
	if res.StatusCode != want {
		t.Fatalf("%s %s: %d %s, want %d", method, path, res.StatusCode, out, want)
	}
	return out
}
