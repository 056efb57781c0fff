package api_test

import (
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"

	"svcd/api/apitest"
)

// matrixSchema: one collection per kind of authz_model_test.go. Every
// collection has a number field `bump` nobody hides, which the realtime
// paths change to make every record travel.
func matrixSchema(t *testing.T, s *apitest.Server) {
	t.Helper()
	bump := f("bump", "number")
	s.CreateCollection(t, coll("members", "auth", []map[string]any{f("name", "text", "searchable", true), f("nick", "text", "hidden", true, "searchable", true), bump},
		"view_rule", "id = @request.auth.id", "create_rule", "", "auth_options", map[string]any{"anonymous": true}))
	s.CreateCollection(t, coll("owned", "base", []map[string]any{
		f("title", "text", "searchable", true), f("secret", "text", "hidden", true, "searchable", true),
		f("owner", "relation", "collection", "members"), f("doc", "file"), bump,
	}, "view_rule", "owner = @request.auth.id", "history_enabled", true))
	s.CreateCollection(t, coll("vault", "base", []map[string]any{f("name", "text", "searchable", true), f("vdoc", "file"), bump}))
	s.CreateCollection(t, coll("pub", "base", []map[string]any{
		f("title", "text", "searchable", true), f("code", "text", "hidden", true, "searchable", true),
		f("link", "relation", "collection", "owned"), f("adm", "relation", "collection", "vault"),
		f("emb", "vector", "dimensions", 3), f("pic", "file"), f("att", "file", "viewRule", ""), bump,
	}, "view_rule", "", "history_enabled", true))
	s.CreateCollection(t, coll("pins", "base", []map[string]any{
		f("name", "text", "searchable", true), f("pin", "text", "hidden", true, "searchable", true),
		f("hemb", "vector", "dimensions", 3, "hidden", true), bump,
	}, "view_rule", ""))
	s.CreateCollection(t, coll("notes", "base", []map[string]any{
		f("text", "text", "searchable", true), f("pub", "relation", "collection", "pub"), f("owned", "relation", "collection", "owned"), bump,
	}, "view_rule", ""))
	s.CreateCollection(t, coll("scratch", "base", []map[string]any{f("n", "number"), f("att", "file")}, "create_rule", ""))
}

// newMatrix starts a node with the schema, the records and the callers.
func newMatrix(t *testing.T) *matrix {
	t.Helper()
	s := apitest.Start(t, apitest.Options{})
	matrixSchema(t, s)
	x := &matrix{t: t, s: s, ids: map[string]string{}, keys: map[string]string{}, etags: map[string]string{}, files: map[string]string{}}
	put := func(coll, rec string, v map[string]any) {
		id := s.CreateRecord(t, coll, v)["id"].(string)
		x.ids[coll+"/"+rec], x.keys[id] = id, coll+"/"+rec
	}
	mk := func(coll, rec, field string) string { return marker{coll, rec, field}.String() }

	s.MustAdmin(t, http.StatusOK, "PATCH", settingsURL, map[string]any{"auth.anonymous.enabled": "1"})
	for _, u := range []string{"ua", "ub"} {
		put("members", u, map[string]any{"email": mk("members", u, "email") + "@example.com", "password": userPassword,
			"name": mk("members", u, "name"), "nick": mk("members", u, "nick")})
	}
	guest := data(t, s, http.StatusOK, "POST", "/api/v1/auth/members/anonymous", nil, nil)
	gid := apitest.Obj(t, guest["record"])["id"].(string)
	x.ids["members/ug"], x.keys[gid] = gid, "members/ug"
	s.MustAdmin(t, http.StatusOK, "PATCH", "/api/v1/members/"+gid, map[string]any{"name": mk("members", "ug", "name")})

	for _, o := range []string{"oa", "ob"} {
		put("owned", o, map[string]any{"title": mk("owned", o, "title"), "secret": mk("owned", o, "secret"), "owner": x.id("members", ownerOf[o])})
	}
	put("vault", "va", map[string]any{"name": mk("vault", "va", "name")})
	// Sorted by their hidden codes, pa comes first and pb last.
	put("pub", "pb", map[string]any{"title": mk("pub", "pb", "title"), "code": mk("pub", "pb", "code"), "link": x.id("owned", "ob"), "emb": []float64{0, 1, 0}})
	put("pub", "pa", map[string]any{"title": mk("pub", "pa", "title"), "code": mk("pub", "pa", "code"), "link": x.id("owned", "oa"),
		"adm": x.id("vault", "va"), "emb": []float64{1, 0, 0}})
	put("pins", "na", map[string]any{"name": mk("pins", "na", "name"), "pin": mk("pins", "na", "pin"), "hemb": []float64{1, 0, 0}})
	put("notes", "ta", map[string]any{"text": mk("notes", "ta", "text"), "pub": x.id("pub", "pa"), "owned": x.id("owned", "oa")})
	put("notes", "tb", map[string]any{"text": mk("notes", "tb", "text"), "pub": x.id("pub", "pb"), "owned": x.id("owned", "ob")})
	x.uploadFiles(t)
	for key, id := range x.ids {
		coll, _, _ := strings.Cut(key, "/")
		res, _ := s.AdminDo(t, "GET", "/api/v1/"+coll+"/"+id, nil)
		x.etags[key] = res.Header.Get("ETag")
	}

	ua := signIn(t, s, "members", mk("members", "ua", "email")+"@example.com", userPassword)["token"].(string)
	ub := signIn(t, s, "members", mk("members", "ub", "email")+"@example.com", userPassword)["token"].(string)
	_, viewer := newAdmin(t, s, "viewer@example.com", "viewer")
	_, editor := newAdmin(t, s, "editor@example.com", "editor")
	_, developer := newAdmin(t, s, "developer@example.com", "developer")
	imp := data(t, s, http.StatusOK, "POST", "/api/v1/admin/impersonate/members/"+x.id("members", "ua"), nil, bearer(editor))["token"].(string)
	token := func(scopes ...string) mcaller {
		return mcaller{name: "token " + strings.Join(scopes, " "), kind: kindToken, scopes: scopes, headers: bearer(mintToken(t, s, scopes...))}
	}
	x.callers = []mcaller{
		{name: "anonymous", kind: kindAnon},
		{name: "user a", kind: kindUser, user: "ua", headers: bearer(ua)},
		{name: "user b", kind: kindUser, user: "ub", headers: bearer(ub)},
		{name: "guest", kind: kindUser, user: "ug", headers: bearer(guest["token"].(string))},
		{name: "impersonation of user a", kind: kindUser, user: "ua", headers: bearer(imp)},
		{name: "viewer", kind: kindAdmin, role: "viewer", headers: bearer(viewer)},
		{name: "editor", kind: kindAdmin, role: "editor", headers: bearer(editor)},
		{name: "developer", kind: kindAdmin, role: "developer", headers: bearer(developer)},
		{name: "owner", kind: kindAdmin, role: "owner", headers: s.AdminHeaders(t, nil)},
		token("collection:pub:read"),
		token("collection:notes:read", "collection:owned:read"),
		token("read"),
		token("collection:members:*"),
	}
	return x
}

// TestAuthorizationMatrixCatchesBrokenRules builds the api tests with
// -tags svc_broken_rules, whose engine ignores every rule
// (engine/rules_broken.go), and requires the matrix to fail: a matrix that
// cannot fail proves nothing.
func TestAuthorizationMatrixCatchesBrokenRules(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the api tests a second time")
	}
	if os.Getenv("SVC_MATRIX_CHILD") != "" {
		t.Skip("inside the broken build")
	}
	t.Parallel()
	cmd := exec.Command("go", "test", "-tags", "sqlite_fts5,svc_broken_rules", "-count=1", "-run", "^TestAuthorizationMatrix$", ".")
	cmd.Env = append(os.Environ(), "SVC_MATRIX_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the matrix passed against an engine that ignores rules:\n%s", out)
	}
	leaks := strings.Count(string(out), "LEAK ")
	if leaks == 0 {
		t.Fatalf("the broken build failed, but not with leaks:\n%.4000s", out)
	}
	t.Logf("the broken build fails with %d leaks", leaks)
}
