package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"svcd/api/apitest"
)

func TestAdminRolesOverHTTP(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	// Real admins of every role, signed in; a real user.
	tokens := map[string]string{"owner": s.AdminToken(t)}
	for _, role := range []string{"viewer", "editor", "developer"} {
		_, tokens[role] = newAdmin(t, s, role+"@example.com", role)
	}
	s.CreateCollection(t, usersCollection())
	userToken := signUp(t, s, "someone@example.com")
	s.CreateCollection(t, coll("posts", "base", []map[string]any{f("title", "text")}))
	id := s.CreateRecord(t, "posts", map[string]any{"title": "x"})["id"].(string)
	s.CreateCollection(t, coll("pub", "base", []map[string]any{f("title", "text"), f("secret", "text", "hidden", true)},
		"view_rule", "", "create_rule", ""))
	pub := s.CreateRecord(t, "pub", map[string]any{"title": "p", "secret": "s"})["id"].(string)

	const (
		ok  = http.StatusOK
		new = http.StatusCreated
		del = http.StatusNoContent
		no  = http.StatusForbidden
		nf  = http.StatusNotFound
	)
	type op struct {
		name, method, url string
		body              func(role string) any
	}
	ops := []op{
		{"list collections", http.MethodGet, collectionsURL, nil},
		{"get collection", http.MethodGet, collectionsURL + "/posts", nil},
		{"create collection", http.MethodPost, collectionsURL, func(r string) any { return coll("c_"+r, "base", nil) }},
		{"patch collection", http.MethodPatch, collectionsURL + "/posts", func(string) any { return map[string]any{"view_rule": nil} }},
		{"get settings", http.MethodGet, settingsURL, nil},
		{"patch settings", http.MethodPatch, settingsURL, func(string) any { return map[string]any{"x.y": "1"} }},
		{"metrics", http.MethodGet, "/api/v1/_/metrics", nil},
		{"list records", http.MethodGet, "/api/v1/posts", nil},
		{"get record", http.MethodGet, "/api/v1/posts/" + id, nil},
		{"create record", http.MethodPost, "/api/v1/posts", func(string) any { return map[string]any{"title": "y"} }},
		{"update record", http.MethodPatch, "/api/v1/posts/" + id, func(string) any { return map[string]any{"title": "z"} }},
		{"legacy list records", http.MethodGet, "/api/collections/posts/records", nil},
		{"list admins", http.MethodGet, "/api/v1/admin/admins", nil},
		{"create admin", http.MethodPost, "/api/v1/admin/admins", func(r string) any {
			return map[string]any{"email": "new-" + r + "@example.com", "password": adminPassword, "role": "viewer"}
		}},
		{"list API tokens", http.MethodGet, "/api/v1/admin/api-tokens", nil},
		{"mint API token", http.MethodPost, "/api/v1/admin/api-tokens", func(string) any { return map[string]any{"name": "t", "scopes": []string{"read"}} }},
		{"list sessions", http.MethodGet, "/api/v1/admin/security/sessions", nil},
		{"audit log", http.MethodGet, "/api/v1/admin/audit-log", nil},
		{"cluster state", http.MethodGet, "/api/v1/admin/cluster", nil},
		{"snapshot", http.MethodPost, "/api/v1/admin/cluster/snapshot", nil},
		{"list indexes", http.MethodGet, collectionsURL + "/posts/indexes", nil},
		{"update an unknown admin", http.MethodPatch, "/api/v1/admin/admins/adm_nope", func(string) any { return map[string]any{"role": "viewer"} }},
		{"delete an unknown API token", http.MethodDelete, "/api/v1/admin/api-tokens/tok_nope", nil},
		{"revoke an unknown session", http.MethodDelete, "/api/v1/admin/security/sessions/nope", nil},
		{"fingerprints", http.MethodGet, "/api/v1/admin/security/fingerprints", nil},
		// The digest hashes every internal table (admins, tokens, settings):
		// cluster administration, the owner's (CONTRACT.md).
		{"cluster digest", http.MethodGet, "/api/v1/admin/cluster/digest", nil},
	}
	// A viewer is anonymous on record routes: posts has only null rules, so
	// it gets the 403 of an admin-only collection.
	want := map[string][]int{
		//          lc  gc  cc   pc  gs  ps  m   lr  gr  cr   ur  llr la  ca   lt  mt   ls  al  cs  sn  li  ua  dt  rs  fp  cd
		"viewer":    {ok, ok, no, no, no, no, ok, no, no, no, no, no, no, no, no, no, no, ok, ok, no, ok, no, no, no, no, no},
		"editor":    {ok, ok, no, no, no, no, ok, ok, ok, new, ok, ok, no, no, no, no, no, ok, ok, no, ok, no, no, no, no, no},
		"developer": {ok, ok, new, ok, no, no, ok, ok, ok, new, ok, ok, no, no, no, no, no, ok, ok, no, ok, no, no, no, no, no},
		"owner":     {ok, ok, new, ok, ok, ok, ok, ok, ok, new, ok, ok, ok, new, ok, new, ok, ok, ok, ok, ok, nf, nf, nf, ok, ok},
	}
	var sc []apitest.Scenario
	for _, role := range []string{"viewer", "editor", "developer", "owner"} {
		for i, o := range ops {
			var body any
			if o.body != nil {
				body = o.body(role)
			}
			s := apitest.Scenario{
				Name:           fmt.Sprintf("%s %s", role, o.name),
				Method:         o.method,
				URL:            o.url,
				Body:           body,
				Headers:        bearer(tokens[role]),
				ExpectedStatus: want[role][i],
			}
			if want[role][i] == no && !strings.Contains(o.url, "posts") {
				s.ExpectedContent = []string{"Your admin role does not allow this action"}
			}
			sc = append(sc, s)
		}
	}
	sc = append(sc,
		apitest.Scenario{
			Name:           "a developer may delete a collection",
			Method:         http.MethodDelete,
			URL:            collectionsURL + "/c_developer",
			Headers:        bearer(tokens["developer"]),
			ExpectedStatus: del,
		},
		apitest.Scenario{
			Name:           "an editor may not",
			Method:         http.MethodDelete,
			URL:            collectionsURL + "/c_owner",
			Headers:        bearer(tokens["editor"]),
			ExpectedStatus: no,
		},
		apitest.Scenario{
			Name:           "a viewer may not delete a record",
			Method:         http.MethodDelete,
			URL:            "/api/v1/posts/" + id,
			Headers:        bearer(tokens["viewer"]),
			ExpectedStatus: no,
		},
		apitest.Scenario{
			Name:            "a user is not an admin",
			URL:             collectionsURL,
			Headers:         bearer(userToken),
			ExpectedStatus:  no,
			ExpectedContent: []string{"Only admins can perform this action"},
		},
		apitest.Scenario{
			Name:               "a viewer reads a public collection as anonymous: no hidden fields",
			URL:                "/api/v1/pub/" + pub,
			Headers:            bearer(tokens["viewer"]),
			ExpectedStatus:     ok,
			ExpectedContent:    []string{`"title":"p"`},
			NotExpectedContent: []string{"secret"},
		},
		apitest.Scenario{
			Name:            "an editor sees hidden fields",
			URL:             "/api/v1/pub/" + pub,
			Headers:         bearer(tokens["editor"]),
			ExpectedStatus:  ok,
			ExpectedContent: []string{`"secret":"s"`},
		},
		apitest.Scenario{
			Name:           "a viewer creates where the create rule is public",
			Method:         http.MethodPost,
			URL:            "/api/v1/pub",
			Headers:        bearer(tokens["viewer"]),
			Body:           map[string]any{"title": "q"},
			ExpectedStatus: new,
		},
		apitest.Scenario{
			Name:           "a viewer may not update where the update rule is null",
			Method:         http.MethodPatch,
			URL:            "/api/v1/pub/" + pub,
			Headers:        bearer(tokens["viewer"]),
			Body:           map[string]any{"title": "q"},
			ExpectedStatus: no,
		},
		apitest.Scenario{
			Name:           "an editor may delete a record",
			Method:         http.MethodDelete,
			URL:            "/api/v1/posts/" + id,
			Headers:        bearer(tokens["editor"]),
			ExpectedStatus: del,
		},
	)
	apitest.Run(t, s, sc)
}
