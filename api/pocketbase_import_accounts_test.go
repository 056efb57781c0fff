package api_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"svcd/api/apitest"
	"svcd/fsm"
	"svcd/internal/pbimport"
)

// TestPocketBaseAccountsImport imports the fixture's superusers and OAuth2
// links (internal/pbimport/testdata, made by a real PocketBase v0.40.4):
// admin@example.com exists in svcd (the test node's owner) and is left as
// it is; ops@example.com becomes an admin with the chosen role and signs
// in with its PocketBase password, the bcrypt hash turning argon2id; alice's
// google link is written for her imported id; bob's kakao link (a
// provider svcd does not know) and the superuser's github link (not a
// record svcd imports) are reported and skipped; a second run skips
// everything and changes nothing.
func TestPocketBaseAccountsImport(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	dir, err := pbimport.Unpack("../internal/pbimport/testdata/pb_data_v0.40.4.tar.gz", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	src, err := pbimport.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	target := &pbimport.Target{URL: s.URL, Token: s.AdminToken(t)}
	rep, err := pbimport.Import(context.Background(), src, target, pbimport.Options{Now: time.Now(), SuperuserRole: "owner"})
	if err != nil {
		t.Fatalf("import: %v (report %s)", err, toJSON(rep))
	}
	if rep.Partial() || !slices.Equal(rep.Superusers.Created, []string{"ops@example.com"}) || !slices.Equal(rep.Superusers.Skipped, []string{"admin@example.com"}) ||
		len(rep.OAuth2Links.Created) != 1 || len(rep.OAuth2Links.Failed) != 0 {
		t.Fatalf("report %s", toJSON(rep))
	}
	problems := strings.Join(rep.Problems, "\n")
	for _, want := range []string{"kakao", "github-sub-ops"} {
		if !strings.Contains(problems, want) {
			t.Errorf("the report does not mention %q: %s", want, problems)
		}
	}

	adminHash := func(email string) string {
		t.Helper()
		var h string
		if err := s.Stack.Store.View(t.Context(), func(r *fsm.Reader) error {
			return r.QueryRow(`SELECT password FROM _svc_admins WHERE email = ?`, email).Scan(&h)
		}); err != nil {
			t.Fatal(err)
		}
		return h
	}
	// The existing admin keeps its own password, not PocketBase's.
	historyDo(t, s, "POST", "/api/v1/admin/auth/login", map[string]any{"email": "admin@example.com", "password": "superpass123"}, nil, http.StatusUnauthorized)
	if h := adminHash("ops@example.com"); !strings.HasPrefix(h, "$2a$") {
		t.Fatalf("the imported hash %q, want PocketBase's bcrypt", h)
	}
	historyDo(t, s, "POST", "/api/v1/admin/auth/login", map[string]any{"email": "ops@example.com", "password": "opspass1235"}, nil, http.StatusUnauthorized)
	for i := 0; i < 2; i++ {
		login := apitest.Obj(t, historyDo(t, s, "POST", "/api/v1/admin/auth/login",
			map[string]any{"email": "ops@example.com", "password": "opspass1234"}, nil, http.StatusOK)["data"])
		if a := apitest.Obj(t, login["admin"]); a["role"] != "owner" || login["token"] == "" {
			t.Fatalf("sign-in %d: %v", i, login)
		}
		if h := adminHash("ops@example.com"); !strings.HasPrefix(h, "$argon2id$") {
			t.Fatalf("after sign-in %d the hash is %q, want argon2id", i, h)
		}
	}

	// Alice's link, for her imported id, with her email.
	alice := apitest.List(t, historyDo(t, s, "GET", "/api/v1/users?filter=email%3D%22alice%40example.com%22", nil, s.AdminHeaders(t, nil), http.StatusOK)["data"])
	aliceID := apitest.Obj(t, alice[0])["id"].(string)
	if want := "users/" + aliceID + "/google"; rep.OAuth2Links.Created[0] != want {
		t.Errorf("link %q, want %q", rep.OAuth2Links.Created[0], want)
	}
	type link struct{ provider, subject, user, email string }
	links := func() []link {
		t.Helper()
		var out []link
		if err := s.Stack.Store.View(t.Context(), func(r *fsm.Reader) error {
			rows, err := r.Query(`SELECT provider, subject, user_id, email FROM _svc_oauth2_links ORDER BY provider`)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var l link
				if err := rows.Scan(&l.provider, &l.subject, &l.user, &l.email); err != nil {
					return err
				}
				out = append(out, l)
			}
			return rows.Err()
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	if got := links(); !slices.Equal(got, []link{{"google", "google-sub-alice", aliceID, "alice@example.com"}}) {
		t.Fatalf("links %v", got)
	}
	admins := len(apitest.List(t, historyDo(t, s, "GET", "/api/v1/admin/admins", nil, s.AdminHeaders(t, nil), http.StatusOK)["data"]))

	// Again: every superuser and link skipped, nothing changed (the
	// rehashed admin keeps its argon2id hash).
	again, err := pbimport.Import(context.Background(), src, target, pbimport.Options{Now: time.Now(), SuperuserRole: "owner"})
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Superusers.Created)+len(again.OAuth2Links.Created) != 0 || len(again.Superusers.Skipped) != 2 || len(again.OAuth2Links.Skipped) != 1 {
		t.Fatalf("second run %s", toJSON(again))
	}
	if n := len(apitest.List(t, historyDo(t, s, "GET", "/api/v1/admin/admins", nil, s.AdminHeaders(t, nil), http.StatusOK)["data"])); n != admins {
		t.Errorf("%d admins after the second run, %d before", n, admins)
	}
	if h := adminHash("ops@example.com"); !strings.HasPrefix(h, "$argon2id$") {
		t.Errorf("the second run changed the hash to %q", h)
	}
	if got := links(); len(got) != 1 {
		t.Errorf("links after the second run %v", got)
	}

	// Alice sees her link as svcd's own: with OAuth2 on, she unlinks
	// google (she keeps her password), and then there is none.
	s.MustAdmin(t, http.StatusOK, "PATCH", "/api/v1/admin/settings", map[string]any{"auth.oauth2.enabled": "1"})
	s.MustAdmin(t, http.StatusOK, "PATCH", "/api/v1/admin/collections/users", map[string]any{"auth_options": map[string]any{"password": true, "oauth2": true}})
	tok := apitest.Obj(t, historyDo(t, s, "POST", "/api/v1/auth/users/login", map[string]any{"email": "alice@example.com", "password": "alice123"}, nil, http.StatusOK)["data"])["token"].(string)
	as := map[string]string{"Authorization": "Bearer " + tok}
	historyDo(t, s, "DELETE", "/api/v1/auth/users/oauth2/google/unlink", nil, as, http.StatusNoContent)
	historyDo(t, s, "DELETE", "/api/v1/auth/users/oauth2/google/unlink", nil, as, http.StatusNotFound)
	if got := links(); len(got) != 0 {
		t.Errorf("links after the unlink %v", got)
	}
}

// TestImportAccountsRoutes holds the two account import routes to their
// rules: owners only, a role above the caller's or unknown refused, a
// hash that is not bcrypt or argon2id, an unknown provider and a missing
// account each failing alone; every call, refused ones included, in the
// audit log.
func TestImportAccountsRoutes(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, members())
	adm := s.AdminHeaders(t, nil)
	const bcryptHash = "$2a$10$3NJ4C1fB6/XC5KQ6ZsvM3eP6mKk0B3OeFXIvF0i7lH2H6kG0Qm6yS"
	res := historyDo(t, s, "POST", "/api/v1/admin/import-admins", map[string]any{"role": "editor", "admins": []any{
		map[string]any{"email": "Dev@Example.com", "password_hash": bcryptHash},
		map[string]any{"email": "plain@example.com", "password_hash": "hunter2"},
		map[string]any{"email": "not an email", "password_hash": bcryptHash},
	}}, adm, http.StatusOK)
	d := apitest.Obj(t, res["data"])
	if toJSON(d["created"]) != `["Dev@example.com"]` || len(apitest.List(t, d["failed"])) != 2 {
		t.Fatalf("import-admins %v", d)
	}
	historyDo(t, s, "POST", "/api/v1/admin/import-admins", map[string]any{"role": "root", "admins": []any{
		map[string]any{"email": "x@example.com", "password_hash": bcryptHash}}}, adm, http.StatusUnprocessableEntity)

	// An editor (the admin just imported is one, once its password is
	// set) may not import.
	historyDo(t, s, "PATCH", "/api/v1/admin/admins/"+adminIDByEmail(t, s, "Dev@example.com"), map[string]any{"password": "a-long-password-2"}, adm, http.StatusOK)
	login := apitest.Obj(t, historyDo(t, s, "POST", "/api/v1/admin/auth/login", map[string]any{"email": "dev@example.com", "password": "a-long-password-2"}, nil, http.StatusOK)["data"])
	editor := map[string]string{"Authorization": "Bearer " + login["token"].(string)}
	historyDo(t, s, "POST", "/api/v1/admin/import-admins", map[string]any{"admins": []any{
		map[string]any{"email": "y@example.com", "password_hash": bcryptHash}}}, editor, http.StatusForbidden)
	historyDo(t, s, "POST", "/api/v1/admin/import-oauth2-links", map[string]any{"collection": "members", "links": []any{
		map[string]any{"user_id": "x", "provider": "google", "subject": "1"}}}, editor, http.StatusForbidden)

	id := register(t, s, "members", "m@example.com", userPassword)
	res = historyDo(t, s, "POST", "/api/v1/admin/import-oauth2-links", map[string]any{"collection": "members", "links": []any{
		map[string]any{"user_id": id, "provider": "github", "subject": "gh-1"},
		map[string]any{"user_id": id, "provider": "kakao", "subject": "k-1"},
		map[string]any{"user_id": "nosuchuser0000", "provider": "google", "subject": "g-1"},
	}}, adm, http.StatusOK)
	d = apitest.Obj(t, res["data"])
	if toJSON(d["created"]) != `["`+id+`/github"]` || len(apitest.List(t, d["failed"])) != 2 {
		t.Fatalf("import-oauth2-links %v", d)
	}
	historyDo(t, s, "POST", "/api/v1/admin/import-oauth2-links", map[string]any{"collection": "nosuch", "links": []any{
		map[string]any{"user_id": id, "provider": "github", "subject": "gh-1"}}}, adm, http.StatusNotFound)

	statuses := func(action string) (out []float64) {
		page := apitest.Obj(t, historyDo(t, s, "GET", "/api/v1/admin/audit-log?actionPrefix="+action, nil, adm, http.StatusOK)["data"])
		for _, e := range apitest.List(t, page["data"]) {
			out = append(out, apitest.Obj(t, e)["status"].(float64))
		}
		slices.Sort(out)
		return out
	}
	if got := statuses("import_admins."); !slices.Equal(got, []float64{200, 403, 422}) {
		t.Errorf("audited import-admins calls %v", got)
	}
	if got := statuses("import_oauth2_links."); !slices.Equal(got, []float64{200, 403, 404}) {
		t.Errorf("audited import-oauth2-links calls %v", got)
	}
}
