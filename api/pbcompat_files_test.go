package api_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"svcd/api/apitest"
)

// pbDocs is the collection of the PocketBase file scenarios: anyone views
// and creates, the owner updates; pics holds several images, secret is a
// protected file.
func pbDocs(t *testing.T, s *apitest.Server, createRule string) {
	t.Helper()
	s.CreateCollection(t, coll("notes", "base", []map[string]any{
		f("title", "text", "required", true), f("owner", "relation", "collection", "users"),
		f("pics", "file", "multiple", true, "maxSize", 100000), f("secret", "file", "protected", true),
	}, "view_rule", "", "create_rule", createRule, "update_rule", "owner = @request.auth.id"))
}

// pbForm sends a multipart body as PocketBase's SDK does (raw token).
func pbForm(t *testing.T, s *apitest.Server, method, path, tok string, parts ...formPart) (*http.Response, []byte) {
	t.Helper()
	h := map[string]string{}
	if tok != "" {
		h = raw(tok)
	}
	return sendForm(t, s, method, path, h, parts...)
}

// TestPocketBaseFiles: multipart record writes (an anonymous create with
// files under a public create rule), downloads under
// /api/files/{collection}/{record}/{file} with PocketBase's thumb,
// download and token parameters, and POST /api/files/token.
func TestPocketBaseFiles(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, coll("users", "auth", []map[string]any{f("name", "text")}, "view_rule", "", "create_rule", ""))
	userTok := signUpIn(t, s, "users", "one@example.com")
	me := apitest.DecodeMap(t, mustDo(t, s, http.StatusOK, "GET", "/api/v1/auth/me", nil, bearer(userTok)))
	uid := apitest.Obj(t, me["data"])["id"].(string)
	pbDocs(t, s, "")
	const base = "/api/collections/notes/records"
	img := pngBytes(t, 16, 16)
	img2 := pngBytes(t, 20, 10)

	// An anonymous multipart create: plain fields, @jsonPayload and two
	// files under one field name, admitted by the public create rule.
	res, body := pbForm(t, s, "POST", base, "", value("title", "anon"), value("@jsonPayload", `{"owner":""}`),
		file("pics", "a.png", img), file("pics", "b.png", img2))
	if res.StatusCode != http.StatusOK {
		t.Fatalf("anonymous multipart create: %d %s", res.StatusCode, body)
	}
	checkPBShape(t, "files_record.json", body)
	rec := apitest.DecodeMap(t, body)
	id := rec["id"].(string)
	pics, _ := rec["pics"].([]any)
	if len(pics) != 2 || rec["title"] != "anon" || rec["collectionName"] != "notes" {
		t.Fatalf("created record %s", body)
	}
	first := pics[0].(string)
	fileURL := "/api/files/notes/" + id + "/" + first

	t.Run("download by collection name or id, the same bytes", func(t *testing.T) {
		code, out, _ := download(t, s, fileURL, nil)
		if code != 200 || !bytes.Equal(out, img) {
			t.Fatalf("download: %d (%d bytes)", code, len(out))
		}
		code, out, _ = download(t, s, "/api/files/"+rec["collectionId"].(string)+"/"+id+"/"+first, nil)
		if code != 200 || !bytes.Equal(out, img) {
			t.Fatalf("download by collection id: %d", code)
		}
	})
	t.Run("a file named under another record or collection is not found", func(t *testing.T) {
		other := apitest.DecodeMap(t, mustDo(t, s, 200, "POST", base, map[string]any{"title": "other"}, nil))["id"].(string)
		for _, p := range []string{"/api/files/notes/" + other + "/" + first, "/api/files/users/" + id + "/" + first, "/api/files/notes/" + id + "/nosuch.png"} {
			code, out, _ := download(t, s, p, nil)
			if code != 404 {
				t.Errorf("%s: %d %s, want 404", p, code, out)
			}
			checkPBShape(t, "error_404.json", out)
		}
	})
	t.Run("thumbs in PocketBase's formats", func(t *testing.T) {
		for _, thumb := range []string{"8x8", "8x8t", "8x8b", "8x8f"} {
			code, out, res := download(t, s, fileURL+"?thumb="+thumb, nil)
			if code != 200 || bytes.Equal(out, img) || res.Header.Get("Content-Type") != "image/png" {
				t.Errorf("thumb %s: %d, %d bytes, %s (want a smaller PNG)", thumb, code, len(out), res.Header.Get("Content-Type"))
			}
		}
		for _, thumb := range []string{"0x8", "8x0"} {
			code, out, _ := download(t, s, fileURL+"?thumb="+thumb, nil)
			if code != 200 || bytes.Equal(out, img) {
				t.Errorf("thumb %s: %d (want a thumbnail keeping the proportion)", thumb, code)
			}
		}
		for _, thumb := range []string{"0x0", "huge", "8x8z"} {
			code, out, _ := download(t, s, fileURL+"?thumb="+thumb, nil)
			if code != 200 || !bytes.Equal(out, img) {
				t.Errorf("thumb %s: %d (want the original)", thumb, code)
			}
		}
	})
	t.Run("download=1 is an attachment", func(t *testing.T) {
		_, _, res := download(t, s, fileURL+"?download=1", nil)
		if cd := res.Header.Get("Content-Disposition"); !strings.HasPrefix(cd, "attachment") {
			t.Errorf("Content-Disposition %q", cd)
		}
		_, _, res = download(t, s, fileURL, nil)
		if cd := res.Header.Get("Content-Disposition"); !strings.HasPrefix(cd, "inline") {
			t.Errorf("without download: Content-Disposition %q", cd)
		}
	})

	// The owner's record with a protected file, written as the SDK does.
	res, body = pbForm(t, s, "POST", base, userTok, value("title", "mine"), value("owner", uid), file("secret", "s.txt", []byte("secret bytes")))
	if res.StatusCode != http.StatusOK {
		t.Fatalf("create with a protected file: %d %s", res.StatusCode, body)
	}
	mine := apitest.DecodeMap(t, body)
	secretURL := "/api/files/notes/" + mine["id"].(string) + "/" + mine["secret"].(string)

	t.Run("file token: PocketBase's shape, opens protected files", func(t *testing.T) {
		if code, out, _ := download(t, s, secretURL, nil); code != 404 {
			t.Errorf("protected file without a token: %d %s, want 404", code, out)
		}
		res, out := s.Do(t, "POST", "/api/files/token", nil, nil)
		if res.StatusCode != 401 {
			t.Errorf("anonymous file token: %d %s", res.StatusCode, out)
		}
		checkPBShape(t, "error_401_token.json", out)
		out = mustDo(t, s, 200, "POST", "/api/files/token", nil, raw(userTok))
		checkPBShape(t, "file_token.json", out)
		tok := apitest.DecodeMap(t, out)["token"].(string)
		code, got, _ := download(t, s, secretURL+"?token="+tok, nil)
		if code != 200 || string(got) != "secret bytes" {
			t.Errorf("protected file with the token: %d %s", code, got)
		}
		// The same token opens /api/v1's path too: it is svcd's file token.
		if code, _, _ := download(t, s, "/api/v1/files/"+mine["secret"].(string)+"?token="+tok, nil); code != 200 {
			t.Errorf("/api/v1 with the any-file token: %d", code)
		}
		if code, _, _ := download(t, s, secretURL+"?token=bad", nil); code != 404 {
			t.Errorf("a bad token: %d, want 404", code)
		}
		// oneTimeToken and bindTokenIp fields keep needing their own
		// per-file token.
		def := apitest.Obj(t, s.MustAdmin(t, 200, "GET", "/api/v1/admin/collections/notes", nil)["data"])
		fields, _ := def["fields"].([]any)
		for _, fd := range fields {
			if fm := fd.(map[string]any); fm["name"] == "secret" {
				fm["oneTimeToken"] = true
			}
		}
		s.MustAdmin(t, 200, "PATCH", "/api/v1/admin/collections/notes", map[string]any{"fields": fields})
		if code, out, _ := download(t, s, secretURL+"?token="+tok, nil); code != 404 {
			t.Errorf("a oneTimeToken file with the any-file token: %d %s, want 404", code, out)
		}
		if code, out, _ := download(t, s, "/api/v1/files/"+mine["secret"].(string)+"?token="+tok, nil); code != 403 {
			t.Errorf("/api/v1, a oneTimeToken file with the any-file token: %d %s, want 403", code, out)
		}
	})

	t.Run("multipart update: append, remove, refused to others", func(t *testing.T) {
		mineURL := base + "/" + mine["id"].(string)
		res, out := pbForm(t, s, "PATCH", mineURL, userTok, value("title", "renamed"), file("pics+", "c.png", img), file("pics+", "d.png", img2))
		if res.StatusCode != 200 {
			t.Fatalf("update: %d %s", res.StatusCode, out)
		}
		got := apitest.DecodeMap(t, out)
		added, _ := got["pics"].([]any)
		if got["title"] != "renamed" || len(added) != 2 {
			t.Fatalf("after append: %s", out)
		}
		res, out = pbForm(t, s, "PATCH", mineURL, userTok, value("pics-", added[0].(string)))
		if res.StatusCode != 200 {
			t.Fatalf("remove: %d %s", res.StatusCode, out)
		}
		if left, _ := apitest.DecodeMap(t, out)["pics"].([]any); len(left) != 1 || left[0] != added[1] {
			t.Errorf("after remove: %s", out)
		}
		// Another caller: PocketBase finds no record through the rule.
		other := signUpIn(t, s, "users", "two@example.com")
		res, out = pbForm(t, s, "PATCH", mineURL, other, value("title", "stolen"))
		if res.StatusCode != 404 {
			t.Errorf("someone else's update: %d %s, want 404", res.StatusCode, out)
		}
	})

	t.Run("a validation failure is PocketBase's 400", func(t *testing.T) {
		res, out := pbForm(t, s, "POST", base, "", file("pics", "a.png", img))
		if res.StatusCode != 400 {
			t.Fatalf("create without the required title: %d %s", res.StatusCode, out)
		}
		checkPBShape(t, "error_create_400.json", out)
	})
}

// TestPocketBaseFilesCreateRule: an anonymous multipart create with files
// is refused by a create rule that needs a caller (PocketBase's 400), and
// admitted for a signed-in caller.
func TestPocketBaseFilesCreateRule(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, coll("users", "auth", []map[string]any{f("name", "text")}, "create_rule", ""))
	userTok := signUpIn(t, s, "users", "one@example.com")
	pbDocs(t, s, `@request.auth.id != ""`)
	img := pngBytes(t, 8, 8)
	res, out := pbForm(t, s, "POST", "/api/collections/notes/records", "", value("title", "x"), file("pics", "a.png", img))
	if res.StatusCode != 400 || !strings.Contains(string(out), `"message":"Failed to create record."`) {
		t.Errorf("anonymous create under an auth rule: %d %s", res.StatusCode, out)
	}
	if res, out := pbForm(t, s, "POST", "/api/collections/notes/records", userTok, value("title", "x"), file("pics", "a.png", img)); res.StatusCode != 200 {
		t.Errorf("signed-in create: %d %s", res.StatusCode, out)
	}
	// /api/v1 keeps svcd's rule: files need a caller.
	if res, out := sendForm(t, s, "POST", "/api/v1/notes", nil, value("title", "x"), file("pics", "a.png", img)); res.StatusCode != 401 {
		t.Errorf("/api/v1 anonymous create with a file: %d %s", res.StatusCode, out)
	}
}

// TestPocketBaseBatch: POST /api/batch as JSON and as the SDK's multipart
// @jsonPayload, with create, upsert (both ways), update and delete, and
// the answers and errors in PocketBase's shapes.
func TestPocketBaseBatch(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, coll("users", "auth", []map[string]any{f("name", "text")}, "view_rule", "", "create_rule", ""))
	userTok := signUpIn(t, s, "users", "one@example.com")
	s.CreateCollection(t, pbPosts("view_rule", "", "create_rule", "", "update_rule", "", "delete_rule", ""))
	const recs = "/api/collections/posts/records"
	existing := apitest.DecodeMap(t, mustDo(t, s, 200, "POST", recs, map[string]any{"title": "old"}, nil))["id"].(string)
	gone := apitest.DecodeMap(t, mustDo(t, s, 200, "POST", recs, map[string]any{"title": "to delete"}, nil))["id"].(string)

	batch := map[string]any{"requests": []map[string]any{
		{"method": "POST", "url": recs, "body": map[string]any{"title": "created"}},
		{"method": "PUT", "url": recs, "body": map[string]any{"id": "upsertnew000001", "title": "upserted new"}},
		{"method": "PUT", "url": recs + "?fields=id,title", "body": map[string]any{"id": existing, "title": "upserted old"}},
		{"method": "PATCH", "url": recs + "/upsertnew000001", "body": map[string]any{"views": 2}},
		{"method": "DELETE", "url": recs + "/" + gone},
	}}
	out := mustDo(t, s, 200, "POST", "/api/batch", batch, raw(userTok))
	checkPBShape(t, "batch.json", out)
	var answers []struct {
		Status int            `json:"status"`
		Body   map[string]any `json:"body"`
	}
	if err := json.Unmarshal(out, &answers); err != nil || len(answers) != 5 {
		t.Fatalf("batch answer %s", out)
	}
	for i, want := range []int{200, 200, 200, 200, 204} {
		if answers[i].Status != want {
			t.Errorf("entry %d: status %d, want %d (%s)", i, answers[i].Status, want, out)
		}
	}
	if answers[1].Body["id"] != "upsertnew000001" || answers[2].Body["id"] != existing || answers[2].Body["title"] != "upserted old" ||
		answers[4].Body != nil {
		t.Errorf("batch bodies %s", out)
	}
	if got := apitest.DecodeMap(t, mustDo(t, s, 200, "GET", recs+"/upsertnew000001", nil, nil)); apitest.Int(t, got["views"]) != 2 || got["title"] != "upserted new" {
		t.Errorf("the upserted record %v", got)
	}
	mustDo(t, s, 404, "GET", recs+"/"+gone, nil, nil)

	t.Run("multipart with @jsonPayload, as the SDK sends it", func(t *testing.T) {
		payload, _ := json.Marshal(map[string]any{"requests": []map[string]any{
			{"method": "POST", "url": recs, "body": map[string]any{"title": "from the sdk"}},
		}})
		res, out := pbForm(t, s, "POST", "/api/batch", userTok, value("@jsonPayload", string(payload)))
		if res.StatusCode != 200 || !strings.Contains(string(out), `"title":"from the sdk"`) {
			t.Errorf("multipart batch: %d %s", res.StatusCode, out)
		}
		res, out = pbForm(t, s, "POST", "/api/batch", userTok, value("@jsonPayload", string(payload)), file("requests.0.pics", "a.txt", []byte("x")))
		if res.StatusCode != 400 || !strings.Contains(string(out), `"batch_files_unsupported"`) {
			t.Errorf("a file in a batch: %d %s", res.StatusCode, out)
		}
	})
	t.Run("a failing entry rolls back and is named", func(t *testing.T) {
		res, out := s.Do(t, "POST", "/api/batch", map[string]any{"requests": []map[string]any{
			{"method": "POST", "url": recs, "body": map[string]any{"title": "rolled back"}},
			{"method": "POST", "url": recs, "body": map[string]any{"views": 1}},
		}}, nil)
		if res.StatusCode != 400 {
			t.Fatalf("failing batch: %d %s", res.StatusCode, out)
		}
		checkPBShape(t, "batch_error.json", out)
		list := mustDo(t, s, 200, "GET", recs+"?filter="+urlq(`title = "rolled back"`), nil, nil)
		if n := apitest.Int(t, apitest.DecodeMap(t, list)["totalItems"]); n != 0 {
			t.Errorf("the failed batch's first entry was kept: %s", list)
		}
		res, out = s.Do(t, "POST", "/api/batch", map[string]any{"requests": []map[string]any{}}, nil)
		if res.StatusCode != 400 {
			t.Errorf("an empty batch: %d %s", res.StatusCode, out)
		}
	})
}

// TestPocketBaseFilesAuthRecord: a multipart sign-up as the SDK sends it
// (account fields in @jsonPayload, an avatar file): passwordConfirm is
// checked and dropped, the account signs in with the password.
func TestPocketBaseFilesAuthRecord(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, coll("members", "auth", []map[string]any{f("name", "text"), f("avatar", "file")}, "create_rule", "", "view_rule", ""))
	const base = "/api/collections/members/records"
	img := pngBytes(t, 8, 8)
	res, out := pbForm(t, s, "POST", base, "", value("@jsonPayload", `{"email":"m@example.com","password":"`+userPassword+`","passwordConfirm":"other-password-1","name":"M"}`),
		file("avatar", "me.png", img))
	if res.StatusCode != 400 || !strings.Contains(string(out), `"passwordConfirm":{"code":"validation_values_mismatch"`) {
		t.Errorf("a mismatched passwordConfirm: %d %s", res.StatusCode, out)
	}
	res, out = pbForm(t, s, "POST", base, "", value("@jsonPayload", `{"email":"m@example.com","password":"`+userPassword+`","passwordConfirm":"`+userPassword+`","name":"M","emailVisibility":true}`),
		file("avatar", "me.png", img))
	if res.StatusCode != 200 {
		t.Fatalf("multipart sign-up: %d %s", res.StatusCode, out)
	}
	rec := apitest.DecodeMap(t, out)
	if a, _ := rec["avatar"].(string); a == "" || rec["name"] != "M" {
		t.Errorf("created member %s", out)
	}
	mustDo(t, s, 200, "POST", "/api/v1/auth/members/login", map[string]any{"email": "m@example.com", "password": userPassword}, nil)
	// Form values too, as a hand-written form sends them.
	res, out = pbForm(t, s, "POST", base, "", value("email", "n@example.com"), value("password", userPassword), value("name", "N"))
	if res.StatusCode != 400 || !strings.Contains(string(out), `"passwordConfirm"`) {
		t.Errorf("a form without passwordConfirm: %d %s", res.StatusCode, out)
	}
	res, out = pbForm(t, s, "POST", base, "", value("email", "n@example.com"), value("password", userPassword), value("passwordConfirm", userPassword), file("avatar", "n.png", img))
	if res.StatusCode != 200 {
		t.Errorf("a form sign-up: %d %s", res.StatusCode, out)
	}
}
