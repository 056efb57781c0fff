package pbschema

import (
	"strings"
	"testing"
)

func TestRewriteRule(t *testing.T) {
	lk := names{"files": "files_pb", "posts": "posts"}
	for _, c := range []struct {
		in, want string
		auth     bool
		problem  string // a substring of a problem, "" for none
		fails    bool
	}{
		{in: "", want: ""},
		{in: "@request.auth.id != ''", want: "@request.auth.id != ''"},
		{in: "@request.data.title:isset = false", want: "@request.body.title:isset = false", problem: "@request.body"},
		{in: "@request.auth.verified = true && verified = true", want: "@request.auth.email_verified = true && verified = true"},
		{in: "verified = true || id = @request.auth.id", want: "email_verified = true || id = @request.auth.id", auth: true},
		{in: "tags:each ?= 'go' && tags:length > 1", want: "tags:each ?= 'go' && tags:length > 1"},
		{in: `created >= "2024-01-01 10:00:00.000Z" && title ~ 'a"b'`, want: `created >= "2024-01-01 10:00:00.000Z" && title ~ 'a"b'`},
		{in: "@collection.files.owner ?= @request.auth.id", want: "@collection.files_pb.owner ?= @request.auth.id", problem: "renamed"},
		{in: "@collection.files:f.owner ?= @request.auth.id", want: "@collection.files_pb:f.owner ?= @request.auth.id", problem: "renamed"},
		{in: "created > @now - 1 && @request.method = 'GET'", want: "created > @now - 1 && @request.method = 'GET'"},
		{in: "author.verified = true", want: "author.verified = true", problem: "relation path"},
		{in: "'verified' = title", want: "'verified' = title", auth: true},
		{in: "a = 1 // the owner\n|| b = 2", want: "a = 1 \n|| b = 2", problem: "comment"},
		{in: "geoDistance(place.lon, place.lat, 1.5, 2) < 25", want: "geoDistance(place.lon, place.lat, 1.5, 2) < 25"},
		{in: "tokenKey != ''", fails: true},
		{in: "@request.auth.tokenKey = 'x'", fails: true},
		{in: "title = 'open", fails: true},
	} {
		got, ps, err := RewriteRule(c.in, RuleContext{Where: "rule", Auth: c.auth, Lookup: lk})
		if (err != nil) != c.fails {
			t.Errorf("RewriteRule(%q) error %v, fails=%v", c.in, err, c.fails)
			continue
		}
		if c.fails {
			continue
		}
		if got != c.want {
			t.Errorf("RewriteRule(%q) = %q, want %q", c.in, got, c.want)
		}
		found := false
		for _, p := range ps {
			found = found || strings.Contains(p.Message, c.problem)
		}
		if (c.problem != "") != (len(ps) > 0) || (c.problem != "" && !found) {
			t.Errorf("RewriteRule(%q) problems %v, want one with %q", c.in, ps, c.problem)
		}
	}
}
