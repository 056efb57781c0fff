package api_test

import (
	"net/url"
	"slices"
	"strings"
	"testing"

	"svcd/api/apitest"
)

// Helpers shared by filter_test.go, rules_test.go, expand_test.go and
// cursor_test.go.

// rid makes a readable record id: name padded with zeros to 15 characters.
func rid(name string) string {
	if len(name) > 15 {
		panic("rid: name longer than 15 characters: " + name)
	}
	return name + strings.Repeat("0", 15-len(name))
}

// userHeaders authenticates as the user id through userSimEngine (rules_test.go):
// a principal of kind User whose @request.auth.id is id.
func userHeaders(id string) map[string]string {
	return map[string]string{"Authorization": "Bearer user-" + id}
}

// withFilter is a list URL of coll filtered by expr (sorted by id, one page).
func withFilter(coll, expr string) string {
	return "/api/v1/" + coll + "?perPage=500&sort=id&filter=" + url.QueryEscape(expr)
}

// dataIDs returns the ids of a list answer's data, in order.
func dataIDs(t testing.TB, body []byte) []string {
	t.Helper()
	var ids []string
	for _, r := range apitest.List(t, apitest.DecodeMap(t, body)["data"]) {
		ids = append(ids, apitest.Obj(t, r)["id"].(string))
	}
	return ids
}

// sameSet reports whether a and b hold the same ids, in any order.
func sameSet(a, b []string) bool {
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}

// wantIDs is an AfterFunc checking that a list answer holds exactly the
// records ids (in any order) and counts them in totalItems.
func wantIDs(ids ...string) func(t testing.TB, s *apitest.Server, body []byte) {
	return func(t testing.TB, s *apitest.Server, body []byte) {
		t.Helper()
		got := dataIDs(t, body)
		if !sameSet(got, ids) {
			t.Errorf("records\n got %v\nwant %v", sorted(got), sorted(ids))
		}
		if n := apitest.Int(t, apitest.DecodeMap(t, body)["totalItems"]); n != int64(len(ids)) {
			t.Errorf("totalItems = %d, want %d", n, len(ids))
		}
	}
}

func sorted(ids []string) []string {
	out := slices.Clone(ids)
	slices.Sort(out)
	if out == nil {
		out = []string{}
	}
	return out
}
