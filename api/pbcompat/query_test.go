package pbcompat

import (
	"net/http/httptest"
	"testing"

	"svcd/engine"
)

// TestListQuery: PocketBase's parameters and defaults
// (pb:tools/search/provider.go, sort.go).
func TestListQuery(t *testing.T) {
	cases := []struct {
		query string
		want  engine.ListQuery
	}{
		{"", engine.ListQuery{Page: 1, PerPage: 30, Sort: "created,id"}},
		{"page=0&perPage=-3", engine.ListQuery{Page: 1, PerPage: 30, Sort: "created,id"}},
		{"perPage=1000&skipTotal=true", engine.ListQuery{Page: 1, PerPage: engine.MaxPerPage, Sort: "created,id", SkipTotal: true}},
		{"sort=-@rowid,@random,title", engine.ListQuery{Page: 1, PerPage: 30, Sort: "-created,title"}},
		{"sort=@random", engine.ListQuery{Page: 1, PerPage: 30, Sort: "created,id"}},
		{"fields=*,expand.author", engine.ListQuery{Page: 1, PerPage: 30, Sort: "created,id"}},
		{"fields=id,title:excerpt(200,true),body&filter=a%3D1&expand=author&skipTotal=1&page=2&perPage=5",
			engine.ListQuery{Page: 2, PerPage: 5, Sort: "created,id", Fields: "id,title,body", Filter: "a=1", Expand: "author", SkipTotal: true}},
	}
	for _, c := range cases {
		got := ListQuery(httptest.NewRequest("GET", "/api/collections/x/records?"+c.query, nil))
		if got != c.want {
			t.Errorf("%q: %+v, want %+v", c.query, got, c.want)
		}
	}
}

func TestOwnsPath(t *testing.T) {
	for path, want := range map[string]bool{
		"/api/health": true, "/api/collections/x/records": true, "/api/realtime": true,
		"/api/v1": false, "/api/v1/posts": false, "/_/health": false, "/realtime": false, "/api/v10": true,
	} {
		if OwnsPath(path) != want {
			t.Errorf("OwnsPath(%q) = %v", path, !want)
		}
	}
}

// TestExcerpt: PocketBase's :excerpt(max, withEllipsis).
func TestExcerpt(t *testing.T) {
	ex := excerpts("id,body:excerpt(12,true),title:excerpt(5),x.y:excerpt(3)")
	if len(ex) != 2 {
		t.Fatalf("excerpts: %v", ex)
	}
	if got := ex["body"].apply("<p>Hello <b>big</b>\n world</p><script>x()</script>!"); got != "Hello big wo..." {
		t.Errorf("body: %q", got)
	}
	if got := ex["title"].apply("short"); got != "short" {
		t.Errorf("title: %q", got)
	}
	if got := ex["title"].apply("héllo wörld"); got != "héllo" {
		t.Errorf("title cut: %q", got)
	}
}
