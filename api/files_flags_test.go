package api_test

import (
	"net/http"
	"strings"
	"testing"

	"svcd/api/apitest"
)

// TestFileFieldFlags: every file field option of SPEC.md's Files section
// (viewRule absent, "", a rule; requireAuth, protected, oneTimeToken,
// bindTokenIp, auditDownloads), the token endpoint, and the collection's
// view rule ANDed with the field's.
func TestFileFieldFlags(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	testFileFieldFlags(t, s)
}

func testFileFieldFlags(t *testing.T, s *apitest.Server) {
	s.CreateCollection(t, usersCollection())
	// bad's viewRule compiles when saved and breaks when tmpc is dropped
	// below: a broken rule denies everyone but admins.
	s.CreateCollection(t, coll("tmpc", "base", []map[string]any{f("x", "number")}))
	fields := []map[string]any{
		f("owner", "relation", "collection", "users"),
		f("pic", "file"),
		f("adm", "file", "viewRule", ""),
		f("own", "file", "viewRule", "owner = @request.auth.id"),
		f("bad", "file", "viewRule", "@collection.tmpc.x = 1"),
		f("ra", "file", "requireAuth", true),
		f("prot", "file", "protected", true),
		f("once", "file", "oneTimeToken", true),
		f("bound", "file", "bindTokenIp", true),
		f("aud", "file", "auditDownloads", true),
	}
	s.CreateCollection(t, coll("vault", "base", fields, "view_rule", "", "update_rule", "owner = @request.auth.id"))
	if res, out := s.Do(t, "DELETE", "/api/v1/admin/collections/tmpc", nil, s.AdminHeaders(t, nil)); res.StatusCode != 204 {
		t.Fatalf("drop tmpc: %d %s", res.StatusCode, out)
	}
	s.CreateCollection(t, coll("priv", "base", []map[string]any{f("owner", "relation", "collection", "users"), f("pic", "file")},
		"view_rule", "owner = @request.auth.id", "update_rule", "owner = @request.auth.id"))
	s.CreateCollection(t, coll("hidden", "base", []map[string]any{f("pic", "file")}))
	ann, bob := bearer(signUp(t, s, "ann@example.com")), bearer(signUp(t, s, "bob@example.com"))
	annID := listIDs(t, s, "/api/v1/users?filter="+urlq(`email = "ann@example.com"`))[0]
	admin := s.AdminHeaders(t, nil)
	rec := s.CreateRecord(t, "vault", map[string]any{"owner": annID})["id"].(string)
	names := map[string]string{}
	for _, fl := range fields[1:] {
		field := fl["name"].(string)
		names[field] = apitest.Obj(t, uploadOK(t, s, "vault", rec, field, ann, file("file", field+".txt", []byte("content of "+field))))["filename"].(string)
	}
	privRec := s.CreateRecord(t, "priv", map[string]any{"owner": annID})["id"].(string)
	privName := apitest.Obj(t, uploadOK(t, s, "priv", privRec, "pic", ann, file("file", "p.txt", []byte("private"))))["filename"].(string)
	hidRec := s.CreateRecord(t, "hidden", map[string]any{})["id"].(string)
	hidName := apitest.Obj(t, uploadOK(t, s, "hidden", hidRec, "pic", admin, file("file", "h.txt", []byte("hidden"))))["filename"].(string)

	get := func(path string, h map[string]string) (int, string) {
		st, body, _ := download(t, s, path, h)
		return st, string(body)
	}
	tokenFor := func(field string, h map[string]string) string {
		t.Helper()
		out := data(t, s, 200, "POST", "/api/v1/files/vault/"+rec+"/"+field+"/"+names[field]+"/token", nil, h)
		if out["expires_at"] == nil {
			t.Errorf("token answer %v", out)
		}
		return out["token"].(string)
	}

	t.Run("rules", func(t *testing.T) {
		cases := []struct {
			name string
			path string
			h    map[string]string
			want int
		}{
			{"no viewRule, anonymous", names["pic"], nil, 200},
			{"viewRule '' anonymous", names["adm"], nil, 403},
			{"viewRule '' user", names["adm"], ann, 403},
			{"viewRule '' admin", names["adm"], admin, 200},
			{"viewRule owner, anonymous", names["own"], nil, 403},
			{"viewRule owner, other user", names["own"], bob, 403},
			{"viewRule owner, owner", names["own"], ann, 200},
			{"invalid viewRule denies", names["bad"], ann, 403},
			{"invalid viewRule, admin", names["bad"], admin, 200},
			{"requireAuth anonymous", names["ra"], nil, 401},
			{"requireAuth user", names["ra"], bob, 200},
			{"protected anonymous", names["prot"], nil, 401},
			{"protected user without token", names["prot"], ann, 401},
			{"protected admin without token", names["prot"], admin, 401},
			{"collection view rule: other user", privName, bob, 404},
			{"collection view rule: anonymous", privName, nil, 404},
			{"collection view rule: owner", privName, ann, 200},
			{"admin-only collection: user", hidName, ann, 403},
			{"admin-only collection: admin", hidName, admin, 200},
		}
		for _, c := range cases {
			if st, body := get(fileURL(c.path), c.h); st != c.want {
				t.Errorf("%s: %d %s, want %d", c.name, st, body, c.want)
			}
		}
		if _, body := get(fileURL(names["prot"]), nil); !strings.Contains(body, `"Token required"`) {
			t.Errorf("protected without token: %s", body)
		}
	})

	t.Run("tokens", func(t *testing.T) {
		if res, out := s.Do(t, "POST", "/api/v1/files/vault/"+rec+"/prot/"+names["prot"]+"/token", nil, nil); res.StatusCode != 401 {
			t.Errorf("anonymous token request: %d %s", res.StatusCode, out)
		}
		if res, out := s.Do(t, "POST", "/api/v1/files/vault/"+rec+"/prot/"+names["pic"]+"/token", nil, ann); res.StatusCode != 404 {
			t.Errorf("token for a file of another field: %d %s", res.StatusCode, out)
		}
		if res, out := s.Do(t, "POST", "/api/v1/files/vault/"+rec+"/own/"+names["own"]+"/token", nil, bob); res.StatusCode != 403 {
			t.Errorf("token for a file the caller may not download: %d %s", res.StatusCode, out)
		}
		tok := tokenFor("prot", ann)
		if st, body := get(fileURL(names["prot"])+"?token="+tok, nil); st != 200 || body != "content of prot" {
			t.Errorf("protected with token: %d %s", st, body)
		}
		if st, _ := get(fileURL(names["prot"])+"?token="+tok, nil); st != 200 {
			t.Errorf("a token of a field without oneTimeToken is reusable: %d", st)
		}
		if st, _ := get(fileURL(names["pic"])+"?token="+tok, nil); st != 403 {
			t.Errorf("a token for another file: %d", st)
		}
		if st, _ := get(fileURL(names["prot"])+"?token=garbage", nil); st != 401 {
			t.Errorf("a malformed token: %d", st)
		}
		if st, _ := get(fileURL(names["prot"])+"?token="+signIn(t, s, "users", "ann@example.com", userPassword)["token"].(string), nil); st != 401 {
			t.Errorf("a session token as a file token: %d", st)
		}
		adminTok := tokenFor("prot", admin)
		if st, _ := get(fileURL(names["prot"])+"?token="+adminTok, nil); st != 200 {
			t.Errorf("an admin's token: %d", st)
		}
		apiTok := bearer(mintToken(t, s, "collection:vault:read"))
		if st, _ := get(fileURL(names["prot"])+"?token="+tokenFor("prot", apiTok), nil); st != 200 {
			t.Errorf("an API token's file token: %d", st)
		}
		// A token's subject is checked again at download: a deleted
		// account's token opens nothing.
		cat := bearer(signUp(t, s, "cat@example.com"))
		catTok := tokenFor("prot", cat)
		if st, _ := get(fileURL(names["prot"])+"?token="+catTok, nil); st != 200 {
			t.Errorf("cat's token: %d", st)
		}
		catID := listIDs(t, s, "/api/v1/users?filter="+urlq(`email = "cat@example.com"`))[0]
		s.MustAdmin(t, 204, "DELETE", "/api/v1/users/"+catID, nil)
		if st, _ := get(fileURL(names["prot"])+"?token="+catTok, nil); st != 401 {
			t.Errorf("a deleted account's token: %d", st)
		}
		own := tokenFor("own", ann)
		if st, _ := get(fileURL(names["own"])+"?token="+own, nil); st != 200 {
			t.Errorf("viewRule owner via the owner's token, anonymously: %d", st)
		}
	})

	t.Run("oneTimeToken", func(t *testing.T) {
		tok := tokenFor("once", ann)
		if res, _ := s.Do(t, "HEAD", fileURL(names["once"])+"?token="+tok, nil, nil); res.StatusCode != 200 || res.Header.Get("Content-Length") != "15" {
			t.Errorf("HEAD with a one-time token: %d %v", res.StatusCode, res.Header)
		}
		if st, body := get(fileURL(names["once"])+"?token="+tok, nil); st != 200 || body != "content of once" {
			t.Fatalf("first use: %d %s", st, body)
		}
		st, body := get(fileURL(names["once"])+"?token="+tok, nil)
		if st != 410 {
			t.Errorf("replay: %d %s", st, body)
		}
		if _, _, res := download(t, s, fileURL(names["once"])+"?token="+tokenFor("once", ann), nil); res.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("a one-time download's Cache-Control: %q", res.Header.Get("Cache-Control"))
		}
	})

	t.Run("bindTokenIp", func(t *testing.T) {
		s.MustAdmin(t, 200, "PATCH", settingsURL, map[string]any{"security.trusted_proxies": "127.0.0.1/32"})
		defer s.MustAdmin(t, 200, "PATCH", settingsURL, map[string]any{"security.trusted_proxies": ""})
		from := func(ip string, h map[string]string) map[string]string {
			out := map[string]string{"X-Forwarded-For": ip}
			for k, v := range h {
				out[k] = v
			}
			return out
		}
		out := data(t, s, 200, "POST", "/api/v1/files/vault/"+rec+"/bound/"+names["bound"]+"/token", nil, from("203.0.113.7", ann))
		tok := out["token"].(string)
		if st, body := get(fileURL(names["bound"])+"?token="+tok, from("203.0.113.7", nil)); st != 200 {
			t.Errorf("same address: %d %s", st, body)
		}
		if st, body := get(fileURL(names["bound"])+"?token="+tok, from("198.51.100.9", nil)); st != 403 {
			t.Errorf("another address: %d %s", st, body)
		}
		// A token of a field without bindTokenIp travels.
		tok = data(t, s, 200, "POST", "/api/v1/files/vault/"+rec+"/prot/"+names["prot"]+"/token", nil, from("203.0.113.7", ann))["token"].(string)
		if st, _ := get(fileURL(names["prot"])+"?token="+tok, from("198.51.100.9", nil)); st != 200 {
			t.Errorf("an unbound token from another address: %d", st)
		}
	})

	t.Run("auditDownloads", func(t *testing.T) {
		if st, _ := get(fileURL(names["aud"]), bob); st != 200 {
			t.Fatalf("download: %d", st)
		}
		tok := tokenFor("aud", ann)
		if st, _ := get(fileURL(names["aud"])+"?token="+tok, nil); st != 200 {
			t.Fatalf("download with token: %d", st)
		}
		get(fileURL(names["pic"]), bob) // not audited
		out := s.MustAdmin(t, 200, "GET", "/api/v1/admin/audit-log?actionPrefix=files.", nil)
		rows := apitest.List(t, apitest.Obj(t, out["data"])["data"])
		if len(rows) != 2 {
			t.Fatalf("audit rows %v", rows)
		}
		byToken, byRule := apitest.Obj(t, rows[0]), apitest.Obj(t, rows[1]) // newest first
		if byRule["action"] != "files.download" || byRule["actor_email"] != "bob@example.com" || !strings.HasSuffix(byRule["target"].(string), names["aud"]+" via rule") ||
			byRule["path"] != fileURL(names["aud"]) || apitest.Int(t, byRule["at"]) == 0 {
			t.Errorf("audit row of a download by rule: %v", byRule)
		}
		if byToken["actor_email"] != "ann@example.com" || !strings.HasSuffix(byToken["target"].(string), " via token") {
			t.Errorf("audit row of a download by token: %v", byToken)
		}
		if strings.Contains(byToken["path"].(string), "token") {
			t.Errorf("the audit path keeps the query: %v", byToken["path"])
		}
	})

	t.Run("a viewer admin reads files as anonymous", func(t *testing.T) {
		_, viewer := newAdmin(t, s, "viewer@example.com", "viewer")
		if st, _ := get(fileURL(hidName), bearer(viewer)); st != 403 {
			t.Errorf("viewer reads an admin-only collection's file: %d", st)
		}
		if res, out := sendForm(t, s, "POST", "/api/v1/files/hidden/"+hidRec+"/pic", bearer(viewer), file("file", "v.txt", []byte("v"))); res.StatusCode != http.StatusUnauthorized {
			t.Errorf("viewer uploads: %d %s", res.StatusCode, out)
		}
	})
}
