package api_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"svcd/api/apitest"
)

// mintToken mints an API token with scopes through the owner.
func mintToken(t testing.TB, s *apitest.Server, scopes ...string) string {
	t.Helper()
	out := s.MustAdmin(t, http.StatusCreated, "POST", "/api/v1/admin/api-tokens", map[string]any{"name": "scoped", "scopes": scopes})
	return apitest.Obj(t, out["data"])["token"].(string)
}

// Finding 1 of the security review (issue 13): an API token scoped to
// collection:pub:read read other collections through expand and got yes/no
// answers from filters on relations and @collection; inside the query it
// acted as its admin. A token reaches nothing outside its scopes.
func TestScopedTokenReachesOnlyItsCollections(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, usersCollection())
	s.CreateCollection(t, coll("secret", "base", []map[string]any{f("name", "text")}))
	s.CreateCollection(t, coll("people", "base", []map[string]any{f("name", "text"), f("pin", "text", "hidden", true)}, "view_rule", ""))
	s.CreateCollection(t, coll("pub", "base", []map[string]any{
		f("title", "text"), f("code", "text", "hidden", true),
		f("secret", "relation", "collection", "secret"),
		f("person", "relation", "collection", "people"),
		f("owner", "relation", "collection", "users"),
	}, "view_rule", ""))
	s.CreateCollection(t, coll("notes", "base", []map[string]any{f("text", "text"), f("pub", "relation", "collection", "pub")}))
	signUp(t, s, "ann@example.com")
	users := listIDs(t, s, "/api/v1/users")
	sec := s.CreateRecord(t, "secret", map[string]any{"name": "launch-codes"})["id"].(string)
	per := s.CreateRecord(t, "people", map[string]any{"name": "pat", "pin": "4711"})["id"].(string)
	pub := s.CreateRecord(t, "pub", map[string]any{"title": "hello", "code": "c0de", "secret": sec, "person": per, "owner": users[0]})["id"].(string)
	s.CreateRecord(t, "pub", map[string]any{"title": "other"})
	s.CreateRecord(t, "notes", map[string]any{"text": "admin-only note", "pub": pub})

	tok := bearer(mintToken(t, s, "collection:pub:read"))
	get := func(t *testing.T, path string) (int, string) {
		t.Helper()
		res, body := s.Do(t, http.MethodGet, path, nil, tok)
		apitest.CheckCommon(t, res, body)
		return res.StatusCode, string(body)
	}

	t.Run("its own collection as an admin", func(t *testing.T) {
		code, body := get(t, "/api/v1/pub/"+pub)
		if code != http.StatusOK || !strings.Contains(body, "c0de") {
			t.Fatalf("GET pub: %d %s (hidden fields of a collection in scope are visible)", code, body)
		}
	})
	t.Run("other collections directly", func(t *testing.T) {
		for _, c := range []string{"secret", "people", "users", "notes"} {
			if code, body := get(t, "/api/v1/"+c); code != http.StatusForbidden || !strings.Contains(body, "Insufficient token scope") {
				t.Errorf("GET %s: %d %s", c, code, body)
			}
		}
	})
	t.Run("expand", func(t *testing.T) {
		for _, exp := range []string{"secret", "person", "owner", "notes_via_pub", "secret,person,owner,notes_via_pub"} {
			for _, path := range []string{"/api/v1/pub/" + pub + "?expand=" + exp, "/api/v1/pub?expand=" + exp} {
				code, body := get(t, path)
				if code != http.StatusOK {
					t.Fatalf("%s: %d %s", path, code, body)
				}
				for _, leak := range []string{"launch-codes", "pat", "4711", "ann@example.com", "admin-only note", `"expand"`} {
					if strings.Contains(body, leak) {
						t.Errorf("%s reveals %q: %s", path, leak, body)
					}
				}
			}
		}
	})
	t.Run("filters on relations and @collection answer nothing", func(t *testing.T) {
		for _, pair := range [][2]string{
			{`secret.name = "launch-codes"`, `secret.name = "nope"`},
			{`@collection.secret.name ?= "launch-codes"`, `@collection.secret.name ?= "nope"`},
			{`person.pin = "4711"`, `person.pin = "0000"`},
			{`owner.email = "ann@example.com"`, `owner.email = "bob@example.com"`},
			{`notes_via_pub.text ?= "admin-only note"`, `notes_via_pub.text ?= "nope"`},
		} {
			_, yes := get(t, "/api/v1/pub?filter="+url.QueryEscape(pair[0]))
			_, no := get(t, "/api/v1/pub?filter="+url.QueryEscape(pair[1]))
			if yes != no {
				t.Errorf("filters %q and %q answer differently:\n%s\n%s", pair[0], pair[1], yes, no)
			}
		}
	})
	t.Run("batch reads", func(t *testing.T) {
		status, out, _ := runBatch(t, s, tok, []map[string]any{
			entry("GET", "/api/v1/pub/"+pub+"?expand=secret,person,owner", nil),
			entry("GET", "/api/v1/pub?filter="+url.QueryEscape(`secret.name = "nope"`), nil),
		})
		if status != http.StatusOK {
			t.Fatalf("batch: %d %v", status, out)
		}
		body := string(mustJSON(t, out))
		for _, leak := range []string{"launch-codes", "4711", "ann@example.com"} {
			if strings.Contains(body, leak) {
				t.Errorf("batch reveals %q: %s", leak, body)
			}
		}
		if n := len(apitest.List(t, apitest.Obj(t, answers(t, status, out)[1]["body"])["data"])); n != 2 {
			t.Errorf("a filter on an unreachable relation narrowed the list to %d rows", n)
		}
		status, out, _ = runBatch(t, s, tok, []map[string]any{entry("GET", "/api/v1/secret/"+sec, nil)})
		expectBatchError(t, status, out, http.StatusForbidden, 0, "")
	})
}
