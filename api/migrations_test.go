package api_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"svcd/api/apitest"
)

const (
	snapshotURL = "/api/v1/admin/migrations/snapshot"
	diffURL     = "/api/v1/admin/migrations/diff"
	applyURL    = "/api/v1/admin/migrations/apply"
)

// migrationSchema gives s an auth collection, a base collection relating
// to it with an index and a rule, and a view reading it.
func migrationSchema(t testing.TB, s *apitest.Server) {
	t.Helper()
	s.CreateCollection(t, coll("members", "auth", []map[string]any{f("nick", "text", "max", 20)}))
	s.CreateCollection(t, coll("posts", "base", []map[string]any{
		f("title", "text", "required", true), f("author", "relation", "collection", "members"),
		f("tags", "select", "values", []string{"a", "b"}, "multiple", true),
	}, "view_rule", "", "create_rule", `@request.auth.id != ""`, "history_enabled", true))
	s.MustAdmin(t, http.StatusCreated, http.MethodPost, collectionsURL+"/posts/indexes", map[string]any{"field": "title"})
	s.CreateCollection(t, coll("post_titles", "view", nil, "view_query", "SELECT id, title FROM posts", "view_rule", ""))
}

// takeSnapshot is the data of GET /admin/migrations/snapshot on s.
func takeSnapshot(t testing.TB, s *apitest.Server) map[string]any {
	t.Helper()
	return apitest.Obj(t, s.MustAdmin(t, http.StatusOK, http.MethodGet, snapshotURL, nil)["data"])
}

// snapshotCollection is the collection name of a snapshot.
func snapshotCollection(t testing.TB, snap map[string]any, name string) map[string]any {
	t.Helper()
	for _, c := range apitest.List(t, snap["collections"]) {
		if m := apitest.Obj(t, c); m["name"] == name {
			return m
		}
	}
	t.Fatalf("snapshot has no collection %s: %v", name, snap)
	return nil
}

// changes are the changes of a diff or apply answer.
func changes(t testing.TB, body []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, c := range apitest.List(t, apitest.Obj(t, apitest.DecodeMap(t, body)["data"])["changes"]) {
		out = append(out, apitest.Obj(t, c))
	}
	return out
}

// findChange is the change with op on collection coll (and field, when
// not empty), or nil.
func findChange(cs []map[string]any, op, coll, field string) map[string]any {
	for _, c := range cs {
		if c["op"] == op && c["collection"] == coll && (field == "" || c["field"] == field) {
			return c
		}
	}
	return nil
}

func TestMigrationsScenarios(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	migrationSchema(t, s)
	s.CreateRecord(t, "posts", map[string]any{"title": "one", "tags": []string{"a"}})
	s.CreateRecord(t, "posts", map[string]any{"title": "two"})
	snap := takeSnapshot(t, s)
	_, viewer := newAdmin(t, s, "viewer@example.com", "viewer")
	_, developer := newAdmin(t, s, "developer@example.com", "developer")

	// The snapshot without tags (2 records, 1 with a value), with a new
	// field, a changed rule, without the view and the auth collection's
	// relation.
	var changed map[string]any
	raw, _ := json.Marshal(snap)
	json.Unmarshal(raw, &changed)
	var keep []any
	for _, c := range apitest.List(t, changed["collections"]) {
		m := apitest.Obj(t, c)
		switch m["name"] {
		case "post_titles":
			continue
		case "posts":
			var fields []any
			for _, fl := range apitest.List(t, m["fields"]) {
				if n := apitest.Obj(t, fl)["name"]; n != "tags" {
					fields = append(fields, fl)
				}
			}
			m["fields"] = append(fields, f("body", "editor"))
			m["view_rule"] = `title != ""`
		}
		keep = append(keep, m)
	}
	changed["collections"] = keep
	newer := map[string]any{"version": 2, "collections": []any{}}

	apitest.Run(t, s, []apitest.Scenario{
		{
			Name: "snapshot: every collection, fields without ids, relations by name, indexes, format and schema versions",
			URL:  snapshotURL, Admin: true, ExpectedStatus: http.StatusOK,
			ExpectedContent:    []string{`"version":1`, `"schema_version":`, `"collection":"members"`, `"indexes":[{"field":"title","unique":false}]`, `"history_enabled":true`, `"view_query":"SELECT id, title FROM posts"`, `"auth_options":{`, `"max":20`},
			NotExpectedContent: []string{`"id":`, `col_`, `fld_`, `"created":`},
		},
		{
			Name: "diff of the node's own snapshot is empty", Method: http.MethodPost, URL: diffURL, Admin: true,
			Body: map[string]any{"snapshot": snap, "mode": "sync"}, ExpectedStatus: http.StatusOK,
			ExpectedContent: []string{`"changes":[]`, `"applies":0`, `"data_loss":false`},
		},
		{
			Name: "additive diff applies only the addition", Method: http.MethodPost, URL: diffURL, Admin: true,
			Body: map[string]any{"snapshot": changed, "mode": "additive"}, ExpectedStatus: http.StatusOK,
			ExpectedContent: []string{`"mode":"additive"`, `"applies":1`, `"data_loss":false`},
			AfterFunc: func(t testing.TB, s *apitest.Server, body []byte) {
				cs := changes(t, body)
				if c := findChange(cs, "add_field", "posts", "body"); c == nil || c["applies"] != true {
					t.Errorf("add_field posts.body: %v", c)
				}
				if c := findChange(cs, "drop_field", "posts", "tags"); c == nil || c["applies"] != false || c["data_loss"] != true || apitest.Int(t, c["lost"]) != 1 {
					t.Errorf("drop_field posts.tags: %v", c)
				}
				if c := findChange(cs, "drop_collection", "post_titles", ""); c == nil || c["applies"] != false {
					t.Errorf("drop_collection post_titles: %v", c)
				}
				if c := findChange(cs, "change_rule", "posts", ""); c == nil || c["rule"] != "view_rule" || c["applies"] != false {
					t.Errorf("change_rule posts.view_rule: %v", c)
				}
			},
		},
		{
			Name: "a viewer may not read the snapshot", URL: snapshotURL, Headers: bearer(viewer), ExpectedStatus: http.StatusForbidden,
		},
		{
			Name: "a viewer may not apply", Method: http.MethodPost, URL: applyURL, Headers: bearer(viewer),
			Body: map[string]any{"snapshot": changed, "mode": "additive"}, ExpectedStatus: http.StatusForbidden,
		},
		{
			Name: "a newer snapshot format is refused", Method: http.MethodPost, URL: applyURL, Admin: true,
			Body: map[string]any{"snapshot": newer, "mode": "sync"}, ExpectedStatus: http.StatusUnprocessableEntity,
			ExpectedContent: []string{`"snapshot.version":"snapshot format 2 is newer than this node's (1)`},
		},
		{
			Name: "a snapshot the schema refuses is refused with details, changing nothing", Method: http.MethodPost, URL: applyURL, Admin: true,
			Body: map[string]any{"mode": "additive", "snapshot": map[string]any{"version": 1, "collections": []any{
				coll("fine", "base", []map[string]any{f("a", "text")}),
				coll("broken", "base", []map[string]any{f("x", "nope")}),
			}}},
			ExpectedStatus:  http.StatusUnprocessableEntity,
			ExpectedContent: []string{`broken.fields.0`, `unknown field type`},
			AfterFunc: func(t testing.TB, s *apitest.Server, _ []byte) {
				if res, _ := s.AdminDo(t, http.MethodGet, collectionsURL+"/fine", nil); res.StatusCode != http.StatusNotFound {
					t.Errorf("collection fine after a refused apply: %d, want 404", res.StatusCode)
				}
			},
		},
		{
			Name: "unknown members and modes are refused", Method: http.MethodPost, URL: diffURL, Admin: true,
			Body: map[string]any{"snapshot": map[string]any{"version": 1, "collections": []any{}, "extra": 1}, "mode": "sync"}, ExpectedStatus: http.StatusUnprocessableEntity,
			ExpectedContent: []string{`unknown field`},
		},
		{
			Name: "module-owned svc_ collections are not part of a snapshot", Method: http.MethodPost, URL: diffURL, Admin: true,
			Body:            map[string]any{"snapshot": map[string]any{"version": 1, "collections": []any{coll("svc_inbox", "base", nil)}}, "mode": "sync"},
			ExpectedStatus:  http.StatusUnprocessableEntity,
			ExpectedContent: []string{`"snapshot.collections.0.name":"svc_ collections belong to the node's modules`},
		},
		{
			Name: "a mode other than additive or sync is refused", Method: http.MethodPost, URL: diffURL, Admin: true,
			Body: map[string]any{"snapshot": snap, "mode": "everything"}, ExpectedStatus: http.StatusUnprocessableEntity,
			ExpectedContent: []string{`"mode":"must be additive or sync"`},
		},
		{
			Name: "a missing snapshot is refused", Method: http.MethodPost, URL: diffURL, Admin: true,
			Body: map[string]any{"mode": "sync"}, ExpectedStatus: http.StatusUnprocessableEntity,
			ExpectedContent: []string{`"snapshot":"is required"`},
		},
		{
			Name: "a developer applies additively: the field is added, nothing removed", Method: http.MethodPost, URL: applyURL, Headers: bearer(developer),
			Body: map[string]any{"snapshot": changed, "mode": "additive"}, ExpectedStatus: http.StatusOK,
			ExpectedHeaders: map[string]string{"X-Svc-Index": "*"},
			AfterFunc: func(t testing.TB, s *apitest.Server, _ []byte) {
				posts := snapshotCollection(t, takeSnapshot(t, s), "posts")
				names := []string{}
				for _, fl := range apitest.List(t, posts["fields"]) {
					names = append(names, apitest.Obj(t, fl)["name"].(string))
				}
				if got := strings.Join(names, ","); got != "title,author,tags,body" {
					t.Errorf("posts fields after additive apply = %s", got)
				}
				if posts["view_rule"] != "" {
					t.Errorf("additive apply changed a rule: %v", posts["view_rule"])
				}
			},
		},
		{
			Name: "sync drops with the data loss counted", Method: http.MethodPost, URL: applyURL, Admin: true,
			Body: map[string]any{"snapshot": changed, "mode": "sync"}, ExpectedStatus: http.StatusOK,
			ExpectedContent: []string{`"data_loss":true`},
			AfterFunc: func(t testing.TB, s *apitest.Server, body []byte) {
				cs := changes(t, body)
				if c := findChange(cs, "drop_field", "posts", "tags"); c == nil || c["applies"] != true || apitest.Int(t, c["lost"]) != 1 {
					t.Errorf("drop_field posts.tags: %v", c)
				}
				if findChange(cs, "add_field", "posts", "body") != nil {
					t.Errorf("sync after additive adds body again: %v", cs)
				}
				if res, _ := s.AdminDo(t, http.MethodGet, collectionsURL+"/post_titles", nil); res.StatusCode != http.StatusNotFound {
					t.Errorf("view after sync: %d, want 404", res.StatusCode)
				}
				list := s.MustAdmin(t, http.StatusOK, http.MethodGet, "/api/v1/posts", nil)
				if n := apitest.Int(t, list["totalItems"]); n != 2 {
					t.Errorf("posts after sync: %d records, want 2", n)
				}
			},
		},
		{
			Name: "applying the same snapshot again changes nothing", Method: http.MethodPost, URL: applyURL, Admin: true,
			Body: map[string]any{"snapshot": changed, "mode": "sync"}, ExpectedStatus: http.StatusOK,
			ExpectedContent:    []string{`"changes":[]`, `"applies":0`},
			NotExpectedContent: []string{},
			AfterFunc: func(t testing.TB, s *apitest.Server, _ []byte) {
				var want map[string]any
				raw, _ := json.Marshal(changed)
				json.Unmarshal(raw, &want)
				got := takeSnapshot(t, s)
				gj, _ := json.Marshal(normalizeFields(t, got["collections"]))
				wj, _ := json.Marshal(normalizeFields(t, want["collections"]))
				if string(gj) != string(wj) {
					t.Errorf("snapshot after sync differs from the one applied:\n got %s\nwant %s", gj, wj)
				}
			},
		},
	})
	// The apply is audited; the diff (a preview) is not.
	log := s.MustAdmin(t, http.StatusOK, http.MethodGet, "/api/v1/admin/audit-log?perPage=100", nil)
	raw, _ = json.Marshal(log)
	if !strings.Contains(string(raw), `"action":"migrations.apply"`) {
		t.Errorf("audit log lacks migrations.apply: %s", raw)
	}
	if strings.Contains(string(raw), "/migrations/diff") {
		t.Errorf("audit log records the diff, a preview: %s", raw)
	}
}

// normalizeFields drops what a definition sent by hand leaves out and the
// node fills (false flags), so two snapshots compare by what they say.
func normalizeFields(t testing.TB, v any) []any {
	t.Helper()
	var out []any
	for _, c := range apitest.List(t, v) {
		m := apitest.Obj(t, c)
		var fields []any
		for _, fl := range apitest.List(t, m["fields"]) {
			fm := map[string]any{}
			for k, x := range apitest.Obj(t, fl) {
				if x != false {
					fm[k] = x
				}
			}
			fields = append(fields, fm)
		}
		cp := map[string]any{}
		for k, x := range m {
			cp[k] = x
		}
		cp["fields"] = fields
		out = append(out, cp)
	}
	return out
}

// TestMigrationsMoveSchema: a snapshot of one node applied to a fresh one
// gives it the same schema (the snapshot of B equals A's), relations,
// indexes, the auth collection and the view included.
func TestMigrationsMoveSchema(t *testing.T) {
	t.Parallel()
	a := apitest.Start(t, apitest.Options{})
	b := apitest.Start(t, apitest.Options{})
	migrationSchema(t, a)
	snapA := takeSnapshot(t, a)
	out := b.MustAdmin(t, http.StatusOK, http.MethodPost, applyURL, map[string]any{"snapshot": snapA, "mode": "additive"})
	if n := apitest.Int(t, apitest.Obj(t, out["data"])["applies"]); n != 4 {
		t.Errorf("applied %d changes on the fresh node, want 4 (3 collections and an index): %v", n, out)
	}
	snapB := takeSnapshot(t, b)
	if !reflect.DeepEqual(snapA, snapB) {
		ja, _ := json.Marshal(snapA)
		jb, _ := json.Marshal(snapB)
		t.Fatalf("snapshot of B differs from A's:\nA %s\nB %s", ja, jb)
	}
	// The moved schema works: a record relating to a member, read
	// through the view.
	m := b.CreateRecord(t, "members", map[string]any{"email": "m@example.com", "password": "a-long-password", "passwordConfirm": "a-long-password"})
	b.CreateRecord(t, "posts", map[string]any{"title": "moved", "author": m["id"]})
	list := b.MustAdmin(t, http.StatusOK, http.MethodGet, "/api/v1/post_titles", nil)
	if n := apitest.Int(t, list["totalItems"]); n != 1 {
		t.Errorf("view on B lists %d records, want 1", n)
	}
}

// TestMigrationsApplyThroughFollower: an apply sent to a follower is one
// command forwarded to the leader; all three nodes end with the same
// schema.
func TestMigrationsApplyThroughFollower(t *testing.T) {
	t.Parallel()
	src := apitest.Start(t, apitest.Options{})
	migrationSchema(t, src)
	snap := takeSnapshot(t, src)
	c := apitest.StartCluster(t, 3, apitest.Options{})
	tok := c.AdminToken(t)
	fol := c.Followers(t)[0]
	res, body := fol.Do(t, http.MethodPost, applyURL, map[string]any{"snapshot": snap, "mode": "sync"}, bearer(tok))
	if res.StatusCode != http.StatusOK || res.Header.Get("X-Svc-Index") == "" {
		t.Fatalf("apply through a follower: %d %s", res.StatusCode, body)
	}
	c.Sync(t)
	for _, n := range c.Nodes {
		res, body := n.Do(t, http.MethodGet, snapshotURL, nil, bearer(tok))
		if res.StatusCode != http.StatusOK {
			t.Fatalf("%s: snapshot %d %s", n.Stack.Node.NodeID(), res.StatusCode, body)
		}
		got := apitest.Obj(t, apitest.DecodeMap(t, body)["data"])
		if !reflect.DeepEqual(got, snap) {
			t.Errorf("%s: schema after the apply differs from the snapshot:\n got %v\nwant %v", n.Stack.Node.NodeID(), got, snap)
		}
	}
}
