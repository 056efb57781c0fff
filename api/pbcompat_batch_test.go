package api_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"svcd/api/apitest"
)

// batchAnswer is one entry of a batch's answer.
type batchAnswer struct {
	Status int            `json:"status"`
	Body   map[string]any `json:"body"`
}

// TestPocketBaseBatchUpsertConcurrent: upserts of the same new id sent at
// once each succeed, exactly one of them creating the record (the choice
// is the apply's, inside the batch's transaction, not a read before the
// proposal). /api/v1's batch answers the create 201 and the updates 200;
// PocketBase's /api/batch answers 200 to both.
func TestPocketBaseBatchUpsertConcurrent(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, coll("users", "auth", []map[string]any{f("name", "text")}))
	s.CreateCollection(t, pbPosts("view_rule", "", "create_rule", "", "update_rule", ""))
	const writers = 6
	for round := 0; round < 3; round++ {
		id := fmt.Sprintf("upsertrace%05d", round)
		statuses := make([]int, writers)
		errs := make([]string, writers)
		var wg sync.WaitGroup
		for i := 0; i < writers; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				path, url := "/api/v1/batch", "/api/v1/posts"
				if i%2 == 1 {
					path, url = "/api/batch", "/api/collections/posts/records"
				}
				res, out, err := s.Send("POST", path, map[string]any{"requests": []map[string]any{
					{"method": "PUT", "url": url, "body": map[string]any{"id": id, "title": fmt.Sprintf("writer %d", i), "views+": 1}},
				}}, nil)
				if err != nil {
					errs[i] = err.Error()
					return
				}
				if res.StatusCode != 200 {
					errs[i] = fmt.Sprintf("%d %s", res.StatusCode, out)
					return
				}
				var answers []batchAnswer
				if path == "/api/v1/batch" {
					var env struct {
						Data []batchAnswer `json:"data"`
					}
					err = json.Unmarshal(out, &env)
					answers = env.Data
				} else {
					err = json.Unmarshal(out, &answers)
				}
				if err != nil || len(answers) != 1 || answers[0].Body["id"] != id {
					errs[i] = fmt.Sprintf("answer %s", out)
					return
				}
				statuses[i] = answers[0].Status
			}(i)
		}
		wg.Wait()
		for i, e := range errs {
			if e != "" {
				t.Fatalf("round %d, writer %d: %s", round, i, e)
			}
		}
		created := 0
		for i, st := range statuses {
			switch {
			case i%2 == 0 && st == 201:
				created++
			case i%2 == 0 && st == 200, i%2 == 1 && st == 200:
			default:
				t.Errorf("round %d, writer %d: status %d", round, i, st)
			}
		}
		if created > 1 {
			t.Errorf("round %d: %d /api/v1 upserts answered 201 (created)", round, created)
		}
		// Every writer's "views+": 1 counted once: the creating upsert
		// folds it into its value, each updating one adds it.
		rec := apitest.DecodeMap(t, mustDo(t, s, 200, "GET", "/api/collections/posts/records/"+id, nil, nil))
		if got := apitest.Int(t, rec["views"]); got != writers {
			t.Errorf("round %d: views %d after %d upserts with views+ 1", round, got, writers)
		}
	}
}

// TestPocketBaseBatchUpsertRules: an upsert of a new id is a create under
// the create rule; of an existing one an update under the update rule,
// and a refused update fails the batch at that entry (PocketBase's 400
// naming the entry), rolling back the entries before it.
func TestPocketBaseBatchUpsertRules(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, coll("users", "auth", []map[string]any{f("name", "text")}))
	s.CreateCollection(t, pbPosts("view_rule", "", "create_rule", "")) // update: admins only
	const recs = "/api/collections/posts/records"
	upsert := func(id, title string) map[string]any {
		return map[string]any{"method": "PUT", "url": recs, "body": map[string]any{"id": id, "title": title}}
	}
	out := mustDo(t, s, 200, "POST", "/api/batch", map[string]any{"requests": []map[string]any{upsert("upsertrule00001", "new")}}, nil)
	var answers []batchAnswer
	if err := json.Unmarshal(out, &answers); err != nil || len(answers) != 1 || answers[0].Status != 200 || answers[0].Body["title"] != "new" {
		t.Fatalf("upsert of a new id: %s", out)
	}
	res, out := s.Do(t, "POST", "/api/batch", map[string]any{"requests": []map[string]any{
		{"method": "POST", "url": recs, "body": map[string]any{"title": "rolled back"}},
		upsert("upsertrule00001", "changed"),
	}}, nil)
	if res.StatusCode != 400 || !strings.Contains(string(out), `"requests":{"1":`) {
		t.Fatalf("upsert of an existing id under an admin-only update rule: %d %s", res.StatusCode, out)
	}
	rec := apitest.DecodeMap(t, mustDo(t, s, 200, "GET", recs+"/upsertrule00001", nil, nil))
	if rec["title"] != "new" {
		t.Errorf("the refused upsert changed the record: %v", rec)
	}
	list := apitest.DecodeMap(t, mustDo(t, s, 200, "GET", recs+"?filter="+urlq(`title = "rolled back"`), nil, nil))
	if n := apitest.Int(t, list["totalItems"]); n != 0 {
		t.Errorf("the failed batch's first entry was kept")
	}
	// An admin's upsert of the same id updates it.
	res, out = s.Do(t, "POST", "/api/batch", map[string]any{"requests": []map[string]any{upsert("upsertrule00001", "by admin")}},
		s.AdminHeaders(t, nil))
	if res.StatusCode != 200 || !strings.Contains(string(out), `"title":"by admin"`) {
		t.Errorf("admin upsert: %d %s", res.StatusCode, out)
	}
}

// TestPocketBaseBatchModifiers: "field+", "+field" and "field-" in batch
// entries' bodies, on creates, updates and upserts, through /api/batch
// and /api/v1/batch; the answer carries X-Svc-Index on both.
func TestPocketBaseBatchModifiers(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, coll("users", "auth", []map[string]any{f("name", "text")}))
	s.CreateCollection(t, pbPosts("view_rule", "", "create_rule", "", "update_rule", ""))
	const recs = "/api/collections/posts/records"
	res, out := s.Do(t, "POST", "/api/batch", map[string]any{"requests": []map[string]any{
		{"method": "POST", "url": recs, "body": map[string]any{"id": "modifiers000001", "title": "m", "views+": 3, "tags+": "a"}},
		{"method": "PATCH", "url": recs + "/modifiers000001", "body": map[string]any{"views-": 1, "+tags": "b"}},
		{"method": "PUT", "url": recs, "body": map[string]any{"id": "modifiers000001", "views+": 10, "tags-": "a"}},
	}}, nil)
	if res.StatusCode != 200 {
		t.Fatalf("batch with modifiers: %d %s", res.StatusCode, out)
	}
	if res.Header.Get("X-Svc-Index") == "" {
		t.Errorf("/api/batch answered no X-Svc-Index")
	}
	rec := apitest.DecodeMap(t, mustDo(t, s, 200, "GET", recs+"/modifiers000001", nil, nil))
	if got := apitest.Int(t, rec["views"]); got != 12 {
		t.Errorf("views %d, want 3-1+10", got)
	}
	if tags, _ := json.Marshal(rec["tags"]); string(tags) != `["b"]` {
		t.Errorf("tags %s, want [b] (a appended, b prepended, a removed)", tags)
	}
	res, out = s.Do(t, "POST", "/api/v1/batch", map[string]any{"requests": []map[string]any{
		{"method": "PATCH", "url": "/api/v1/posts/modifiers000001", "body": map[string]any{"views+": 1}},
	}}, nil)
	if res.StatusCode != 200 || !strings.Contains(string(out), `"views":13`) {
		t.Errorf("/api/v1 batch with a modifier: %d %s", res.StatusCode, out)
	}
	if res.Header.Get("X-Svc-Index") == "" {
		t.Errorf("/api/v1/batch answered no X-Svc-Index")
	}
	// A modifier on a field that cannot take it fails the entry.
	res, out = s.Do(t, "POST", "/api/batch", map[string]any{"requests": []map[string]any{
		{"method": "PATCH", "url": recs + "/modifiers000001", "body": map[string]any{"views+": "many"}},
	}}, nil)
	if res.StatusCode != 400 || !strings.Contains(string(out), `"requests":{"0":`) {
		t.Errorf("a bad modifier operand: %d %s", res.StatusCode, out)
	}
}

// TestMultipartModifiers: write modifiers as plain values of multipart
// record bodies, as PocketBase's SDK sends them with files: on creates
// and updates, through PocketBase's paths and /api/v1, next to a file.
func TestMultipartModifiers(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, coll("users", "auth", []map[string]any{f("name", "text")}, "create_rule", ""))
	s.CreateCollection(t, coll("posts", "base", []map[string]any{
		f("title", "text"), f("views", "number"), f("tags", "select", "values", []string{"a", "b"}, "multiple", true),
		f("pics", "file", "multiple", true, "maxSize", 100000),
	}, "view_rule", "", "create_rule", "", "update_rule", ""))
	tok := signUpIn(t, s, "users", "mods@example.com")
	img := pngBytes(t, 8, 8)
	const recs = "/api/collections/posts/records"
	res, out := pbForm(t, s, "POST", recs, tok, value("id", "multipartmods01"), value("title", "m"), value("views+", "2"),
		value("tags+", "a"), file("pics", "a.png", img))
	if res.StatusCode != 200 || !strings.Contains(string(out), `"views":2`) || !strings.Contains(string(out), `"tags":["a"]`) {
		t.Fatalf("multipart create with modifiers: %d %s", res.StatusCode, out)
	}
	res, out = pbForm(t, s, "PATCH", recs+"/multipartmods01", tok, value("views+", "5"), value("+tags", "b"), file("pics+", "b.png", img))
	if res.StatusCode != 200 || !strings.Contains(string(out), `"views":7`) || !strings.Contains(string(out), `"tags":["b","a"]`) {
		t.Fatalf("multipart update with modifiers: %d %s", res.StatusCode, out)
	}
	if pics, _ := apitest.DecodeMap(t, out)["pics"].([]any); len(pics) != 2 {
		t.Errorf("the update's file was not appended: %s", out)
	}
	res, out = sendForm(t, s, "PATCH", "/api/v1/posts/multipartmods01", map[string]string{"Authorization": "Bearer " + tok},
		value("views-", "1"), value("tags-", "a"))
	if res.StatusCode != 200 || !strings.Contains(string(out), `"views":6`) || !strings.Contains(string(out), `"tags":["b"]`) {
		t.Errorf("/api/v1 multipart update with modifiers: %d %s", res.StatusCode, out)
	}
	res, out = pbForm(t, s, "PATCH", recs+"/multipartmods01", tok, value("title+", "x"))
	if res.StatusCode != 400 || !strings.Contains(string(out), `title+`) {
		t.Errorf("a modifier on a text field: %d %s", res.StatusCode, out)
	}
}
