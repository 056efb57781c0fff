package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"svcd/api/apitest"
)

const batchURL = "/api/v1/batch"

// entry is one batch request element.
func entry(method, url string, body any, headers ...string) map[string]any {
	m := map[string]any{"method": method, "url": url}
	if body != nil {
		m["body"] = body
	}
	if len(headers) > 0 {
		h := map[string]string{}
		for i := 0; i+1 < len(headers); i += 2 {
			h[headers[i]] = headers[i+1]
		}
		m["headers"] = h
	}
	return m
}

// runBatch posts entries with headers h (admin when h is nil) and returns
// the status and the decoded body.
func runBatch(t testing.TB, s *apitest.Server, h map[string]string, entries []map[string]any) (int, map[string]any, *http.Response) {
	t.Helper()
	if h == nil {
		h = s.AdminHeaders(t, nil)
	}
	res, body := s.Do(t, http.MethodPost, batchURL, map[string]any{"requests": entries}, h)
	apitest.CheckCommon(t, res, body)
	return res.StatusCode, apitest.DecodeMap(t, body), res
}

// answers returns the data array of a successful batch.
func answers(t testing.TB, status int, out map[string]any) []map[string]any {
	t.Helper()
	if status != http.StatusOK {
		t.Fatalf("batch: %d %v", status, out)
	}
	var a []map[string]any
	for _, x := range apitest.List(t, out["data"]) {
		a = append(a, apitest.Obj(t, x))
	}
	return a
}

// countRecords is totalItems of an admin list of c.
func countRecords(t testing.TB, s *apitest.Server, c string) int64 {
	t.Helper()
	return apitest.Int(t, s.MustAdmin(t, http.StatusOK, http.MethodGet, "/api/v1/"+c+"?perPage=1", nil)["totalItems"])
}

// expectBatchError checks a failed batch: status, the message naming the
// failing index and, when given, a details key.
func expectBatchError(t testing.TB, status int, out map[string]any, wantStatus, index int, detail string) {
	t.Helper()
	if status != wantStatus || apitest.Int(t, out["code"]) != int64(wantStatus) {
		t.Fatalf("status %d (code %v), want %d: %v", status, out["code"], wantStatus, out)
	}
	prefix := fmt.Sprintf("batch failed at request %d: ", index)
	if msg, _ := out["error"].(string); !strings.HasPrefix(msg, prefix) {
		t.Fatalf("error %q does not start with %q", msg, prefix)
	}
	if detail != "" {
		if d, _ := out["details"].(map[string]any); d == nil || d[detail] == nil {
			t.Fatalf("details %v lack %q", out["details"], detail)
		}
	}
}

func TestBatchOperations(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, public(coll("authors", "base", []map[string]any{f("name", "text")})))
	authorsID := s.MustAdmin(t, http.StatusOK, http.MethodGet, collectionsURL+"/authors", nil)["data"].(map[string]any)["id"]
	s.CreateCollection(t, public(coll("posts", "base", []map[string]any{
		f("title", "text", "required", true), f("n", "number"), f("author", "relation", "collection", authorsID),
	})))
	old := s.CreateRecord(t, "posts", map[string]any{"title": "old", "n": 0})["id"].(string)
	gone := s.CreateRecord(t, "posts", map[string]any{"title": "gone", "n": 0})["id"].(string)

	const aid, pid = "author000000001", "post00000000001"
	status, out, res := runBatch(t, s, nil, []map[string]any{
		entry("POST", "/api/v1/authors", map[string]any{"id": aid, "name": "Ann"}),
		entry("POST", "/api/v1/posts", map[string]any{"id": pid, "title": "new", "n": 1, "author": aid}),
		// Reads see the batch's earlier writes (same transaction).
		entry("GET", "/api/v1/posts/"+pid+"?expand=author&fields=id,title,expand", nil),
		entry("GET", "/api/v1/posts?filter=n%3D1&sort=-title&perPage=5", nil),
		entry("PATCH", "/api/v1/posts/"+old, map[string]any{"n": 2}),
		entry("PUT", "/api/v1/posts/"+pid, map[string]any{"title": "renamed"}),
		entry("DELETE", "/api/v1/posts/"+gone, nil),
		entry("GET", "/api/v1/posts?sort=title&fields=title", nil),
	})
	a := answers(t, status, out)
	if res.Header.Get("X-Svc-Index") == "" {
		t.Errorf("no X-Svc-Index on a batch answer")
	}
	wantStatus := []int64{201, 201, 200, 200, 200, 200, 204, 200}
	if len(a) != len(wantStatus) {
		t.Fatalf("%d answers, want %d: %v", len(a), len(wantStatus), a)
	}
	for i, w := range wantStatus {
		if got := apitest.Int(t, a[i]["status"]); got != w {
			t.Errorf("answer %d: status %d, want %d (%v)", i, got, w, a[i])
		}
	}
	if a[1]["body"].(map[string]any)["id"] != pid || a[0]["body"].(map[string]any)["name"] != "Ann" {
		t.Errorf("create bodies: %v %v", a[0]["body"], a[1]["body"])
	}
	got := apitest.Obj(t, a[2]["body"])
	if got["title"] != "new" || got["n"] != nil {
		t.Errorf("get with fields: %v", got)
	}
	if exp := apitest.Obj(t, got["expand"]); apitest.Obj(t, exp["author"])["name"] != "Ann" {
		t.Errorf("get with expand: %v", got)
	}
	list := apitest.Obj(t, a[3]["body"])
	if apitest.Int(t, list["totalItems"]) != 1 || apitest.Int(t, list["perPage"]) != 5 ||
		apitest.Obj(t, apitest.List(t, list["data"])[0])["id"] != pid {
		t.Errorf("filtered list inside the batch: %v", list)
	}
	if b := apitest.Obj(t, a[4]["body"]); apitest.Int(t, b["n"]) != 2 {
		t.Errorf("patch body: %v", b)
	}
	if b := apitest.Obj(t, a[5]["body"]); b["title"] != "renamed" {
		t.Errorf("put body: %v", b)
	}
	if a[6]["body"] != nil {
		t.Errorf("delete body %v, want null", a[6]["body"])
	}
	var titles []string
	for _, r := range apitest.List(t, apitest.Obj(t, a[7]["body"])["data"]) {
		rec := apitest.Obj(t, r)
		titles = append(titles, rec["title"].(string))
		if rec["n"] != nil {
			t.Errorf("fields=title kept n: %v", rec)
		}
	}
	if strings.Join(titles, ",") != "old,renamed" {
		t.Errorf("final list in the batch: %v", titles)
	}
	// And the state after the batch is what the answers said.
	if p, _ := getRecord(t, s, "posts", pid); p["title"] != "renamed" || p["author"] != aid {
		t.Errorf("after: %v", p)
	}
	if res, _ := s.AdminDo(t, http.MethodGet, "/api/v1/posts/"+gone, nil); res.StatusCode != http.StatusNotFound {
		t.Errorf("deleted record: %d", res.StatusCode)
	}
}

func TestBatchLegacyURLs(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, public(coll("notes", "base", []map[string]any{f("text", "text")})))
	const id = "note00000000001"
	status, out, _ := runBatch(t, s, map[string]string{}, []map[string]any{
		entry("POST", "/api/collections/notes/records", map[string]any{"id": id, "text": "a"}),
		entry("PATCH", "/api/collections/notes/records/"+id, map[string]any{"text": "b"}),
		entry("GET", "/api/collections/notes/records/"+id, nil),
		entry("GET", "/api/collections/notes/records?perPage=1", nil),
		entry("POST", "/api/v1/collections/notes/records", map[string]any{"text": "c"}),
		entry("DELETE", "/api/collections/notes/records/"+id, nil),
	})
	a := answers(t, status, out)
	if b := apitest.Obj(t, a[2]["body"]); b["text"] != "b" {
		t.Errorf("legacy get inside batch: %v", b)
	}
	if l := apitest.Obj(t, a[3]["body"]); apitest.Int(t, l["totalItems"]) != 1 {
		t.Errorf("legacy list: %v", l)
	}
	if n := countRecords(t, s, "notes"); n != 1 {
		t.Errorf("%d notes after, want 1 (c)", n)
	}
}

// TestBatchAllOrNothing: a batch of 100 whose entry 57 fails leaves nothing
// behind, whatever the cause: validation at prepare, a rule refused at
// apply, an If-Match mismatch at apply, a unique index at apply.
func TestBatchAllOrNothing(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, usersCollection())
	tok := signUp(t, s, "batch@example.com")
	s.CreateCollection(t, coll("items", "base", []map[string]any{
		f("title", "text", "max", 20), f("code", "text", "unique", true),
	}, "view_rule", "", "create_rule", "title != 'refused'", "update_rule", "", "delete_rule", ""))
	target := s.CreateRecord(t, "items", map[string]any{"title": "target", "code": "taken"})["id"].(string)
	other := s.CreateRecord(t, "items", map[string]any{"title": "other", "code": "other"})["id"].(string)
	_, etag := getRecord(t, s, "items", target)
	_, otherTag := getRecord(t, s, "items", other)
	if etag == "" {
		t.Fatal("no ETag")
	}

	build := func(bad map[string]any) []map[string]any {
		var es []map[string]any
		for i := 0; i < 100; i++ {
			if i == 57 {
				es = append(es, bad)
				continue
			}
			if i == 30 {
				// An earlier update must roll back too.
				es = append(es, entry("PATCH", "/api/v1/items/"+target, map[string]any{"title": "changed"}))
				continue
			}
			es = append(es, entry("POST", "/api/v1/items", map[string]any{"title": fmt.Sprintf("t%d", i), "code": fmt.Sprintf("c%d", i)}))
		}
		return es
	}
	cases := []struct {
		name   string
		bad    map[string]any
		status int
		detail string
	}{
		{"validation", entry("POST", "/api/v1/items", map[string]any{"title": strings.Repeat("x", 21)}), 422, "title"},
		{"rule denied at apply", entry("POST", "/api/v1/items", map[string]any{"title": "refused"}), 403, ""},
		// The tag of a record entry 30 changed is not sent: that version
		// is rolled back.
		{"if-match mismatch", entry("PATCH", "/api/v1/items/"+target, map[string]any{"title": "x"}, "If-Match", `W/"stale"`), 412, ""},
		{"if-match mismatch, untouched record", entry("DELETE", "/api/v1/items/"+other, nil, "If-Match", `W/"stale"`), 412, ""},
		{"unique at apply", entry("POST", "/api/v1/items", map[string]any{"title": "dup", "code": "c3"}), 422, "code"},
		{"missing record", entry("DELETE", "/api/v1/items/nosuchrecord123", nil), 404, ""},
	}
	for _, c := range cases {
		before := countRecords(t, s, "items")
		status, out, res := runBatch(t, s, bearer(tok), build(c.bad))
		expectBatchError(t, status, out, c.status, 57, c.detail)
		if want := map[string]string{"if-match mismatch, untouched record": otherTag}[c.name]; res.Header.Get("ETag") != want {
			t.Errorf("%s: ETag %q, want %q", c.name, res.Header.Get("ETag"), want)
		}
		if after := countRecords(t, s, "items"); after != before {
			t.Errorf("%s: %d records before, %d after a failed batch", c.name, before, after)
		}
		if rec, tag := getRecord(t, s, "items", target); rec["title"] != "target" || tag != etag {
			t.Errorf("%s: entry 30's update survived: %v", c.name, rec)
		}
	}
	// The same batch with a good entry 57 and the right If-Match commits.
	es := build(entry("PATCH", "/api/v1/items/"+target, map[string]any{"code": "mine"}, "if-match", etag))
	es[30] = entry("POST", "/api/v1/items", map[string]any{"title": "t30", "code": "c30"})
	before := countRecords(t, s, "items")
	status, out, _ := runBatch(t, s, bearer(tok), es)
	if a := answers(t, status, out); len(a) != 100 {
		t.Fatalf("%d answers", len(a))
	}
	if after := countRecords(t, s, "items"); after != before+99 {
		t.Errorf("%d records after, want %d", after, before+99)
	}
}

// TestBatchRulesAtApply: each entry's rule is decided against the state the
// batch has built so far, as the caller.
func TestBatchRulesAtApply(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, usersCollection())
	alice := signUp(t, s, "alice@example.com")
	bob := signUp(t, s, "bob@example.com")
	own := "owner = @request.auth.id"
	s.CreateCollection(t, coll("papers", "base", []map[string]any{f("title", "text"), f("owner", "text")},
		"view_rule", own, "create_rule", own, "update_rule", own, "delete_rule", own))
	me := func(tok string) string {
		res, body := s.Do(t, http.MethodGet, "/api/v1/auth/me", nil, bearer(tok))
		if res.StatusCode != http.StatusOK {
			t.Fatalf("me: %d %s", res.StatusCode, body)
		}
		return apitest.Obj(t, apitest.DecodeMap(t, body)["data"])["id"].(string)
	}
	aliceID, bobID := me(alice), me(bob)
	const a1, b1 = "docalice0000001", "docbob000000001"
	status, out, _ := runBatch(t, s, bearer(alice), []map[string]any{
		entry("POST", "/api/v1/papers", map[string]any{"id": a1, "title": "mine", "owner": aliceID}),
		entry("PATCH", "/api/v1/papers/"+a1, map[string]any{"title": "still mine"}),
		entry("GET", "/api/v1/papers", nil),
	})
	a := answers(t, status, out)
	if l := apitest.Obj(t, a[2]["body"]); apitest.Int(t, l["totalItems"]) != 1 {
		t.Errorf("alice's list inside her batch: %v", l)
	}
	// Alice may not create for Bob: refused at apply (the create rule reads
	// the stored row), everything before it rolled back.
	status, out, _ = runBatch(t, s, bearer(alice), []map[string]any{
		entry("PATCH", "/api/v1/papers/"+a1, map[string]any{"title": "third"}),
		entry("POST", "/api/v1/papers", map[string]any{"id": b1, "title": "forged", "owner": bobID}),
	})
	expectBatchError(t, status, out, http.StatusForbidden, 1, "")
	if rec, _ := getRecord(t, s, "papers", a1); rec["title"] != "still mine" {
		t.Errorf("entry 0 survived a refused batch: %v", rec)
	}
	// Bob cannot see Alice's doc: an update of it is a 404, as on the
	// single route, even after his own create in the same batch.
	status, out, _ = runBatch(t, s, bearer(bob), []map[string]any{
		entry("POST", "/api/v1/papers", map[string]any{"id": b1, "title": "bob's", "owner": bobID}),
		entry("DELETE", "/api/v1/papers/"+a1, nil),
	})
	expectBatchError(t, status, out, http.StatusNotFound, 1, "")
	if n := countRecords(t, s, "papers"); n != 1 {
		t.Errorf("%d papers, want 1", n)
	}
	// A read the caller may not make fails the batch too.
	status, out, _ = runBatch(t, s, bearer(bob), []map[string]any{
		entry("POST", "/api/v1/papers", map[string]any{"id": b1, "title": "bob's", "owner": bobID}),
		entry("GET", "/api/v1/papers/"+a1, nil),
	})
	expectBatchError(t, status, out, http.StatusNotFound, 1, "")
	if n := countRecords(t, s, "papers"); n != 1 {
		t.Errorf("%d docs after a failed read, want 1", n)
	}
}

func TestBatchMalformed(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, public(coll("things", "base", []map[string]any{f("name", "text")})))
	many := make([]map[string]any, 101)
	for i := range many {
		many[i] = entry("POST", "/api/v1/things", map[string]any{"name": "x"})
	}
	ok := entry("POST", "/api/v1/things", map[string]any{"name": "x"})
	cases := []struct {
		name    string
		entries []map[string]any
		status  int
		index   int // -1: no index in the message
		detail  string
	}{
		{"empty", []map[string]any{}, 422, -1, "requests"},
		{"over 100", many, 422, -1, "requests"},
		{"bad method", []map[string]any{ok, entry("OPTIONS", "/api/v1/things", nil)}, 422, 1, "method"},
		{"post with id", []map[string]any{entry("POST", "/api/v1/things/abc", nil)}, 422, 0, "method"},
		{"delete without id", []map[string]any{ok, ok, entry("DELETE", "/api/v1/things", nil)}, 422, 2, "method"},
		{"admin url", []map[string]any{entry("GET", "/api/v1/admin/collections", nil)}, 422, 0, "url"},
		{"files url", []map[string]any{ok, entry("GET", "/api/v1/files/things/x/y", nil)}, 422, 1, "url"},
		{"absolute url", []map[string]any{entry("GET", "http://evil.example/api/v1/things", nil)}, 422, 0, "url"},
		{"legacy without records", []map[string]any{entry("GET", "/api/collections/things", nil)}, 422, 0, "url"},
		{"too deep", []map[string]any{entry("GET", "/api/v1/things/a/b", nil)}, 422, 0, "url"},
		{"unknown collection", []map[string]any{ok, entry("POST", "/api/v1/nope", map[string]any{})}, 404, 1, ""},
		{"body not an object", []map[string]any{entry("POST", "/api/v1/things", []int{1})}, 400, 0, ""},
		{"unsupported list param", []map[string]any{entry("GET", "/api/v1/things?search=x", nil)}, 400, 0, ""},
		{"bad cursor", []map[string]any{ok, entry("GET", "/api/v1/things?cursor=!!", nil)}, 400, 1, ""},
	}
	for _, c := range cases {
		before := countRecords(t, s, "things")
		status, out, _ := runBatch(t, s, nil, c.entries)
		if c.index >= 0 {
			expectBatchError(t, status, out, c.status, c.index, c.detail)
		} else if status != c.status || (c.detail != "" && apitest.Obj(t, out["details"])[c.detail] == nil) {
			t.Errorf("%s: %d %v", c.name, status, out)
		}
		if after := countRecords(t, s, "things"); after != before {
			t.Errorf("%s: a refused batch wrote %d records", c.name, after-before)
		}
	}
	for _, raw := range []string{`{`, `{"requests":{}}`, `[]`} {
		res, body := s.Do(t, http.MethodPost, batchURL, []byte(raw), s.AdminHeaders(t, map[string]string{"Content-Type": "application/json"}))
		apitest.CheckCommon(t, res, body)
		if res.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: %d %s", raw, res.StatusCode, body)
		}
	}
}

// TestBatchTokenScopes: an API token needs the scope of every entry's
// collection and access; a batch outside it is refused whole.
func TestBatchTokenScopes(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, coll("posts", "base", []map[string]any{f("title", "text")}))
	s.CreateCollection(t, coll("notes", "base", []map[string]any{f("title", "text")}))
	mint := func(scopes ...string) string {
		t.Helper()
		out := s.MustAdmin(t, http.StatusCreated, http.MethodPost, "/api/v1/admin/api-tokens", map[string]any{"name": "ci", "scopes": scopes})
		return apitest.Obj(t, out["data"])["token"].(string)
	}
	postsRW := mint("collection:posts:*")
	readAll := mint("read")
	create := func(c string) map[string]any { return entry("POST", "/api/v1/"+c, map[string]any{"title": "x"}) }
	list := func(c string) map[string]any { return entry("GET", "/api/v1/"+c, nil) }
	cases := []struct {
		tok     string
		entries []map[string]any
		index   int // -1: allowed
	}{
		{postsRW, []map[string]any{create("posts"), list("posts")}, -1},
		{postsRW, []map[string]any{create("posts"), list("notes")}, 1},
		{readAll, []map[string]any{list("posts"), list("notes")}, -1},
		{readAll, []map[string]any{list("posts"), create("notes")}, 1},
	}
	for i, c := range cases {
		before := countRecords(t, s, "posts")
		status, out, _ := runBatch(t, s, bearer(c.tok), c.entries)
		if c.index < 0 {
			answers(t, status, out)
			continue
		}
		expectBatchError(t, status, out, http.StatusForbidden, c.index, "")
		if !strings.Contains(out["error"].(string), "scope") {
			t.Errorf("case %d: %v", i, out)
		}
		if after := countRecords(t, s, "posts"); after != before {
			t.Errorf("case %d: a refused batch wrote", i)
		}
	}
}
