package api_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"svcd/api/apitest"
)

// TestRestore: a backup restored through POST /admin/restore brings the
// data back to the backup's state at one log index, keeps the current
// database aside, keeps every token valid whose account still holds it,
// and keeps every revocation made after the backup in force: a token
// revoked before the restore stays revoked, an account deleted since
// comes back with its old tokens refused, admins and API tokens are the
// current ones. Realtime clients are told to resync.
func TestRestore(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	owner := s.AdminToken(t)
	s.CreateCollection(t, usersCollection())
	s.CreateCollection(t, public(coll("posts", "base", []map[string]any{f("title", "text")})))
	for i := range 3 {
		s.CreateRecord(t, "posts", map[string]any{"title": fmt.Sprintf("before %d", i)})
	}
	alice1 := signUp(t, s, "alice@example.com")
	bob := signUp(t, s, "bob@example.com")
	bobID := me(t, s, bob)["id"].(string)
	_, viewer := newAdmin(t, s, "gone@example.com", "viewer")
	gone := adminIDByEmail(t, s, "gone@example.com")

	b := downloadBackup(t, s, owner, "", nil)

	// After the backup: data, sign-ins and revocations.
	s.CreateRecord(t, "posts", map[string]any{"title": "after"})
	must(t, s, "POST", "/api/v1/auth/logout", bearer(alice1))                   // alice1 revoked
	alice2 := login(t, s, "alice@example.com", userPassword)                    // issued after the backup
	s.MustAdmin(t, http.StatusNoContent, "DELETE", "/api/v1/users/"+bobID, nil) // bob deleted
	carol := signUp(t, s, "carol@example.com")                                  // exists only after the backup
	_, late := newAdmin(t, s, "late@example.com", "owner")                      // an admin created after the backup
	s.MustAdmin(t, http.StatusNoContent, "DELETE", "/api/v1/admin/admins/"+gone, nil)
	apiTok := apitest.Obj(t, s.MustAdmin(t, http.StatusCreated, "POST", "/api/v1/admin/api-tokens",
		map[string]any{"name": "ci", "scopes": []string{"admin"}})["data"])["token"].(string)

	sse := openSSE(t, s, "topics=posts", nil)
	if fr := sse.next(); fr.event != "subscribed" {
		t.Fatalf("SSE: %+v", fr)
	}
	ws := dialWS(t, s, "", nil)
	if m := ws.ask(map[string]any{"type": "subscribe", "topics": []string{"posts"}}); m["type"] != "subscribed" {
		t.Fatalf("subscribe: %v", m)
	}

	res, body := upload(t, s, owner, b.data, "")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("restore: %d %s", res.StatusCode, body)
	}
	out := apitest.Obj(t, apitest.DecodeMap(t, body)["data"])
	idx := res.Header.Get("X-Svc-Index")
	if idx == "" || fmt.Sprint(out["index"]) != idx || uint64(apitest.Int(t, out["backup_index"])) != b.index ||
		out["sha256"] != b.header.Get("X-Svc-Backup-Sha256") || out["previous"] != "restores/before-"+idx+".db" {
		t.Fatalf("restore answer %v (X-Svc-Index %s)", out, idx)
	}

	// The data is the backup's.
	list := apitest.DecodeMap(t, must(t, s, "GET", "/api/v1/posts?perPage=50", nil))
	if n := len(apitest.List(t, list["data"])); n != 3 || strings.Contains(fmt.Sprint(list), "after") {
		t.Fatalf("posts after the restore: %v", list)
	}
	// Tokens and revocations.
	for _, tc := range []struct {
		name, tok string
		want      int
	}{
		{"the owner's token", owner, 200},
		{"a user token revoked after the backup", alice1, 401},
		{"a user token issued after the backup", alice2, 200},
		{"a token of an account deleted after the backup", bob, 401},
		{"a token of an account created after the backup", carol, 401},
		{"an admin created after the backup", late, 200},
		{"an admin deleted after the backup", viewer, 401},
		{"an API token minted after the backup", apiTok, 200},
	} {
		url := "/api/v1/auth/me"
		if strings.HasPrefix(tc.tok, "svcat_") {
			url = "/api/v1/admin/collections"
		}
		if res, body := s.Do(t, "GET", url, nil, bearer(tc.tok)); res.StatusCode != tc.want {
			t.Errorf("%s: %d %s, want %d", tc.name, res.StatusCode, body, tc.want)
		}
	}
	// bob's record is back (the backup's), his password too.
	s.MustAdmin(t, http.StatusOK, "GET", "/api/v1/users/"+bobID, nil)
	login(t, s, "bob@example.com", userPassword)
	// Realtime: one resync, at the restore's index, on both transports.
	if fr := sse.next(); fr.event != "resync" || fr.id != idx || fr.data["reason"] != "restore" {
		t.Fatalf("SSE after the restore: %+v", fr)
	}
	if m := ws.read(); m["type"] != "resync" || m["eventId"] != idx || m["reason"] != "restore" {
		t.Fatalf("WebSocket after the restore: %v", m)
	}
	// The previous database is kept aside, whole.
	prev := backupFile{index: 0}
	if prev.data, _ = os.ReadFile(filepath.Join(s.DataDir, out["previous"].(string))); len(prev.data) == 0 {
		t.Fatal("no copy of the previous database")
	}
	// Writes go on after the restore; the audit log kept its entries and
	// records the restore.
	s.CreateRecord(t, "posts", map[string]any{"title": "after the restore"})
	log := string(must(t, s, "GET", "/api/v1/admin/audit-log?perPage=500", bearer(owner)))
	for _, action := range []string{"backup.download", "backup.restore", "api_tokens.create", "admins.delete"} {
		if !strings.Contains(log, `"action":"`+action+`"`) {
			t.Errorf("the audit log lacks %s: %s", action, log)
		}
	}
}

// TestRestoreForms: the upload may be gzip (a ?gzip=1 download), a
// multipart field file, or a file of an older internal schema version,
// which the restore brings to the cluster's version in the same command.
func TestRestoreForms(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	owner := s.AdminToken(t)
	s.CreateCollection(t, public(coll("posts", "base", []map[string]any{f("title", "text")})))
	s.CreateRecord(t, "posts", map[string]any{"title": "one"})
	zipped := downloadBackup(t, s, owner, "?gzip=1", nil)
	s.CreateRecord(t, "posts", map[string]any{"title": "two"})
	count := func() int {
		return len(apitest.List(t, apitest.DecodeMap(t, must(t, s, "GET", "/api/v1/posts", nil))["data"]))
	}
	res, body := upload(t, s, owner, gz(zipped.data), "")
	if res.StatusCode != 200 || count() != 1 {
		t.Fatalf("gzip: %d %s, %d posts", res.StatusCode, body, count())
	}
	s.CreateRecord(t, "posts", map[string]any{"title": "two"})
	res, body = upload(t, s, owner, zipped.data, "file")
	if res.StatusCode != 200 || count() != 1 {
		t.Fatalf("multipart: %d %s, %d posts", res.StatusCode, body, count())
	}
	// The backup module's own table arrived with version 18 and the audit
	// log's indexes with 19: a backup of version 17 lacks them.
	old := zipped.rewrite(t, `DROP TABLE _svc_backups`, `DROP INDEX _svc_audit_at`, `DROP INDEX _svc_audit_actor`,
		`UPDATE _svc_meta SET v = 17 WHERE k = 'schema_version'`)
	res, body = upload(t, s, owner, old, "")
	out := apitest.DecodeMap(t, body)
	if res.StatusCode != 200 || apitest.Int(t, apitest.Obj(t, out["data"])["schema_version"]) != 17 {
		t.Fatalf("older schema: %d %s", res.StatusCode, body)
	}
	now := downloadBackup(t, s, owner, "", nil)
	var v int
	var tables int
	db := now.open(t)
	db.QueryRow(`SELECT v FROM _svc_meta WHERE k = 'schema_version'`).Scan(&v)
	db.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE name IN ('_svc_backups', '_svc_audit_at', '_svc_audit_actor')`).Scan(&tables)
	if v != 19 || tables != 3 || now.header.Get("X-Svc-Schema-Version") != "19" {
		t.Fatalf("after restoring a version 17 backup: schema version %d, %d of _svc_backups and the audit indexes", v, tables)
	}
	must(t, s, "GET", "/_/ready", nil)
	s.MustAdmin(t, http.StatusOK, "GET", backupsURL, nil)
}

// me is GET /auth/me's data for tok.
func me(t testing.TB, s *apitest.Server, tok string) map[string]any {
	t.Helper()
	return apitest.Obj(t, apitest.DecodeMap(t, must(t, s, "GET", "/api/v1/auth/me", bearer(tok)))["data"])
}

// adminIDByEmail finds an admin's id by email.
func adminIDByEmail(t testing.TB, s *apitest.Server, email string) string {
	t.Helper()
	for _, a := range apitest.List(t, s.MustAdmin(t, http.StatusOK, "GET", "/api/v1/admin/admins", nil)["data"]) {
		if m := apitest.Obj(t, a); m["email"] == email {
			return m["id"].(string)
		}
	}
	t.Fatalf("no admin %s", email)
	return ""
}
