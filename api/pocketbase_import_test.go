package api_test

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"testing"
	"time"

	"svcd/api/apitest"
	"svcd/internal/pbimport"
)

// TestPocketBaseRecordsImport imports the records and files of a
// pb_data made by a real PocketBase v0.40.4 (internal/pbimport/testdata)
// into collections of the same shape: ids, field values, created and
// updated times and files come across; an auth user keeps PocketBase's
// hash; a second run skips every record and uploads nothing.
func TestPocketBaseRecordsImport(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, coll("users", "auth", []map[string]any{f("name", "text"), f("avatar", "file")}))
	s.CreateCollection(t, public(coll("posts", "base", []map[string]any{
		f("title", "text", "required", true), f("body", "editor"), f("views", "number"), f("published", "bool"),
		f("published_at", "date"), f("tags", "select", "values", []string{"go", "raft", "sqlite"}, "multiple", true),
		f("status", "select", "values", []string{"draft", "live"}), f("author", "relation", "collection", "users"),
		f("attachments", "file", "multiple", true), f("meta", "json"), f("link", "url"), f("contact", "email"),
		f("place", "geoPoint")})))

	dir, err := pbimport.Unpack("../internal/pbimport/testdata/pb_data_v0.40.4.tar.gz", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	src, err := pbimport.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	colls, err := src.Collections()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*pbimport.Collection{}
	for _, c := range colls {
		byName[c.Name] = c
	}
	target := &pbimport.Target{URL: s.URL, Token: s.AdminToken(t)}
	run := func() *pbimport.Report {
		t.Helper()
		rep := &pbimport.Report{}
		for _, name := range []string{"users", "posts"} {
			err := pbimport.ImportRecords(context.Background(), src, target, pbimport.RecordPlan{From: byName[name], To: name}, time.Now(), rep)
			if err != nil {
				t.Fatal(err)
			}
		}
		return rep
	}
	rep := run()
	if u, p := rep.Collections[0], rep.Collections[1]; u.Created != 2 || p.Created != 2 || p.Files != 2 || len(p.Failed)+len(u.Failed)+len(p.FileFail) != 0 {
		t.Fatalf("first import: %+v", rep)
	}

	adm := s.AdminHeaders(t, nil)
	var alice string
	users := historyDo(t, s, "GET", "/api/v1/users?sort=email", nil, adm, http.StatusOK)["data"].([]any)
	if len(users) != 2 {
		t.Fatalf("users %v", users)
	}
	u := users[0].(map[string]any)
	alice = u["id"].(string)
	if u["email"] != "alice@example.com" || u["email_verified"] != true || u["name"] != "Alice" {
		t.Fatalf("alice %v", u)
	}
	var posts []map[string]any
	for _, p := range historyDo(t, s, "GET", "/api/v1/posts?sort=title", nil, adm, http.StatusOK)["data"].([]any) {
		posts = append(posts, p.(map[string]any))
	}
	if len(posts) != 2 {
		t.Fatalf("posts %v", posts)
	}
	draft, hello := posts[0], posts[1]
	if draft["id"] != "hellocustomid01" || draft["status"] != "draft" || draft["published_at"] != nil {
		t.Errorf("the draft %v", draft)
	}
	// The fixture was made at 2026-11-27 01:40:34.088Z: the draft, which
	// has no files, keeps both times (an upload is an update: a record
	// with files has the import's updated time).
	if draft["created"] != float64(1795743634) || draft["updated"] != float64(1795743634) {
		t.Errorf("the draft's times %v %v", draft["created"], draft["updated"])
	}
	published := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).Unix()
	if hello["views"] != float64(42) || hello["published"] != true || hello["published_at"] != float64(published) ||
		hello["author"] != alice || toJSON(hello["tags"]) != `["go","sqlite"]` || toJSON(hello["meta"]) != `{"lang":"en","score":9.5}` ||
		hello["link"] != "https://example.com/hello" || toJSON(hello["place"]) != `{"lat":48.8566,"lon":2.3522}` {
		t.Errorf("the published post %v", hello)
	}
	if hello["created"] == nil || hello["updated"].(float64) < hello["created"].(float64) || hello["created"].(float64) < float64(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Unix()) {
		t.Errorf("times %v %v", hello["created"], hello["updated"])
	}
	files := hello["attachments"].([]any)
	if len(files) != 2 {
		t.Fatalf("attachments %v", files)
	}
	res, body := s.Do(t, "GET", "/api/v1/files/"+files[1].(string), nil, adm)
	want, _ := os.ReadFile(dir + "/storage/" + byName["posts"].ID + "/" + hello["id"].(string) + "/notes_kwspka6qxp.txt")
	if res.StatusCode != http.StatusOK || !bytes.Equal(body, want) || len(want) == 0 {
		t.Errorf("file %s: %d %q, want %q", files[1], res.StatusCode, body, want)
	}

	// Again: nothing created, nothing uploaded, the records unchanged.
	rep = run()
	if u, p := rep.Collections[0], rep.Collections[1]; u.Skipped != 2 || p.Skipped != 2 || p.Created+u.Created+p.Files != 0 {
		t.Fatalf("second import: %+v", rep)
	}
	again := apitest.Obj(t, historyDo(t, s, "GET", "/api/v1/posts/"+hello["id"].(string), nil, adm, http.StatusOK)["data"])
	if toJSON(again) != toJSON(hello) {
		t.Errorf("the second run changed %v into %v", hello, again)
	}
}

// TestPocketBaseImport imports the whole fixture into a fresh node: the
// collections translated and created in dependency order (posts relates
// to users; the view comes last; the collection named like a reserved
// svcd name is renamed), then records and files. The report names what
// changed; a second run creates nothing.
func TestPocketBaseImport(t *testing.T) {
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
	rep, err := pbimport.Import(context.Background(), src, target, pbimport.Options{Now: time.Now()})
	if err != nil {
		t.Fatalf("import: %v (report %+v)", err, rep)
	}
	t.Logf("report: %s", toJSON(rep))
	counts := map[string]pbimport.CollectionReport{}
	for _, c := range rep.Collections {
		counts[c.From] = c
	}
	if counts["users"].Created != 2 || counts["posts"].Created != 2 || counts["posts"].Files != 2 || counts["files"].Created != 1 || counts["files"].To == "files" {
		t.Fatalf("report %s", toJSON(rep))
	}
	report := toJSON(rep.Problems)
	for _, want := range []string{"kakao", "published = true", "verified = true"} {
		if !bytes.Contains([]byte(report), []byte(want)) {
			t.Errorf("the report does not mention %q: %s", want, report)
		}
	}
	adm := s.AdminHeaders(t, nil)
	// Alice signs in with the 8-character password PocketBase hashed
	// (bcrypt); the sign-in replaces the hash with argon2id (the auth
	// module's tests check that on every node), and the password keeps
	// working; a wrong one is refused.
	for i := 0; i < 2; i++ {
		login := historyDo(t, s, "POST", "/api/v1/auth/users/login", map[string]any{"email": "alice@example.com", "password": "alice123"}, nil, http.StatusOK)
		if apitest.Obj(t, login["data"])["token"] == "" {
			t.Fatalf("login %d: %v", i, login)
		}
	}
	historyDo(t, s, "POST", "/api/v1/auth/users/login", map[string]any{"email": "alice@example.com", "password": "alice124"}, nil, http.StatusUnauthorized)
	// The superuser svcd did not have is an admin with the default role.
	ops := apitest.Obj(t, historyDo(t, s, "POST", "/api/v1/admin/auth/login", map[string]any{"email": "ops@example.com", "password": "opspass1234"}, nil, http.StatusOK)["data"])
	if apitest.Obj(t, ops["admin"])["role"] != "developer" {
		t.Errorf("the imported superuser %v, want a developer", ops)
	}
	stats := historyDo(t, s, "GET", "/api/v1/post_stats", nil, adm, http.StatusOK)["data"].([]any)
	if len(stats) != 2 {
		t.Errorf("the view lists %v", stats)
	}
	again, err := pbimport.Import(context.Background(), src, target, pbimport.Options{Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range again.Collections {
		if c.Created != 0 || c.Files != 0 {
			t.Errorf("second run: %+v", c)
		}
	}
}
