package api_test

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"svcd/api/apitest"
)

// pbEmails lists the emails of a PocketBase list answer, in order.
func pbEmails(t testing.TB, body []byte) []string {
	t.Helper()
	var out []string
	for _, it := range apitest.List(t, apitest.DecodeMap(t, body)["items"]) {
		out = append(out, apitest.Obj(t, it)["email"].(string))
	}
	return out
}

// TestPocketBaseClientFilter: a PocketBase client's filter and sort speak
// PocketBase's names, rewritten as collection rules are on import:
// verified is email_verified on an auth collection and after
// @request.auth, and PocketBase's date strings compare with dates.
func TestPocketBaseClientFilter(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, coll("users", "auth", []map[string]any{f("name", "text")}, "view_rule", "", "create_rule", ""))
	var ids []string
	for _, u := range []struct {
		email    string
		verified bool
	}{{"plain@example.com", false}, {"checked@example.com", true}} {
		rec := s.MustAdmin(t, http.StatusCreated, "POST", "/api/v1/users", map[string]any{"email": u.email, "password": userPassword, "email_verified": u.verified})
		ids = append(ids, apitest.Obj(t, rec["data"])["id"].(string))
	}
	s.CreateCollection(t, coll("events", "base", []map[string]any{f("name", "text"), f("at", "date")}, "view_rule", ""))
	s.CreateRecord(t, "events", map[string]any{"name": "old", "at": "2023-05-01 10:00:00.000Z"})
	s.CreateRecord(t, "events", map[string]any{"name": "new", "at": "2024-05-01 10:00:00.000Z"})
	checked := signIn(t, s, "users", "checked@example.com", userPassword)["token"].(string)
	plain := signIn(t, s, "users", "plain@example.com", userPassword)["token"].(string)

	list := func(coll, query string, h map[string]string) []byte {
		return mustDo(t, s, http.StatusOK, "GET", "/api/collections/"+coll+"/records?"+query, nil, h)
	}
	filter := func(expr string) string { return "filter=" + url.QueryEscape(expr) }
	admin := s.AdminHeaders(t, nil)

	if got := pbEmails(t, list("users", filter("verified = true"), admin)); !slices.Equal(got, []string{"checked@example.com"}) {
		t.Errorf("verified = true: %v", got)
	}
	if got := pbEmails(t, list("users", filter("verified = false"), admin)); !slices.Equal(got, []string{"plain@example.com"}) {
		t.Errorf("verified = false: %v", got)
	}
	if got := pbEmails(t, list("users", "sort=-verified", admin)); !slices.Equal(got, []string{"checked@example.com", "plain@example.com"}) {
		t.Errorf("sort=-verified: %v", got)
	}
	if got := pbEmails(t, list("users", "sort=verified", admin)); !slices.Equal(got, []string{"plain@example.com", "checked@example.com"}) {
		t.Errorf("sort=verified: %v", got)
	}
	// @request.auth.verified: the caller's own flag.
	for tok, want := range map[string]int{checked: 2, plain: 0} {
		items := apitest.List(t, apitest.DecodeMap(t, list("users", filter("@request.auth.verified = true"), raw(tok)))["items"])
		if len(items) != want {
			t.Errorf("@request.auth.verified = true: %d records, want %d", len(items), want)
		}
	}
	// PocketBase's date strings, on a date field and on created.
	names := func(body []byte) []string {
		var out []string
		for _, it := range apitest.List(t, apitest.DecodeMap(t, body)["items"]) {
			out = append(out, apitest.Obj(t, it)["name"].(string))
		}
		return out
	}
	for expr, want := range map[string][]string{
		`at >= "2024-01-01 00:00:00.000Z"`:      {"new"},
		`at < "2024-01-01 00:00:00.000Z"`:       {"old"},
		`created >= "2024-01-01 00:00:00.000Z"`: {"old", "new"},
		`created < "2024-01-01 00:00:00.000Z"`:  nil,
	} {
		if got := names(list("events", filter(expr)+"&sort=at", nil)); !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", expr, got, want)
		}
	}
	// A realtime subscription's filter is rewritten the same way: of the
	// two users changed, only the verified one is delivered.
	stream := openPBRealtime(t, s)
	sub := pbOptions("users/*", map[string]any{"filter": "verified = true"})
	if st, out := pbSubscribe(t, s, stream.clientID, []string{sub}, nil); st != http.StatusNoContent {
		t.Fatalf("subscribe with verified: %d %v", st, out)
	}
	for _, id := range ids {
		s.MustAdmin(t, http.StatusOK, "PATCH", "/api/v1/users/"+id, map[string]any{"name": "changed"})
	}
	if f := stream.next(); f.event != sub || apitest.Obj(t, f.data["record"])["id"] != ids[1] {
		t.Errorf("the verified subscription's event: %+v", f)
	}
	stream.quiet()
	if st, _ := pbSubscribe(t, s, stream.clientID, []string{pbOptions("users/*", map[string]any{"filter": "tokenKey != ''"})}, nil); st != http.StatusBadRequest {
		t.Errorf("a subscription filtering on tokenKey: %d", st)
	}
	// A filter the rewriter refuses is PocketBase's invalid filter.
	res, body := s.Do(t, "GET", "/api/collections/users/records?"+filter("tokenKey != ''"), nil, admin)
	apitest.CheckCommon(t, res, body)
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "validation_invalid_filter") {
		t.Errorf("a filter on tokenKey: %d %s", res.StatusCode, body)
	}
}
