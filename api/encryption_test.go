package api_test

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"svcd/api/apitest"
)

const testEncKey = "0123456789abcdef0123456789abcdef" // 32 characters

// dbHolds reports whether any of the node's SQLite files holds s.
func dbHolds(t *testing.T, s *apitest.Server, text string) bool {
	t.Helper()
	for _, name := range []string{"data.db", "data.db-wal"} {
		b, err := os.ReadFile(filepath.Join(s.DataDir, name))
		if err == nil && bytes.Contains(b, []byte(text)) {
			return true
		}
	}
	return false
}

func TestEncryptedFields(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{EncryptionKey: testEncKey})
	s.CreateCollection(t, coll("vault", "base", []map[string]any{
		f("label", "text"), f("secret", "text", "encrypted", true), f("meta", "json", "encrypted", true),
	}))
	rec := s.CreateRecord(t, "vault", map[string]any{"label": "a", "secret": "tops3cret-plaintext", "meta": map[string]any{"pin": "98765-plain"}})
	id := rec["id"].(string)
	if rec["secret"] != "tops3cret-plaintext" {
		t.Fatalf("create answered %v", rec)
	}
	body := string(must(t, s, "GET", "/api/v1/vault/"+id, s.AdminHeaders(t, nil)))
	if !strings.Contains(body, `"secret":"tops3cret-plaintext"`) || !strings.Contains(body, `"pin":"98765-plain"`) {
		t.Fatalf("get: %s", body)
	}
	s.MustAdmin(t, http.StatusOK, "PATCH", "/api/v1/vault/"+id, map[string]any{"secret": "second-plaintext"})
	if dbHolds(t, s, "tops3cret-plaintext") || dbHolds(t, s, "98765-plain") || dbHolds(t, s, "second-plaintext") {
		t.Fatal("an encrypted value is in the database in plain text")
	}
	if !dbHolds(t, s, "enc:v1:") {
		t.Fatal("no sealed value in the database")
	}
	apitest.Run(t, s, []apitest.Scenario{
		// Encrypted fields are not filterable or sortable: like any field
		// a caller may not filter on, the filter is dropped (it is never
		// evaluated against ciphertext, so it reveals nothing).
		{Name: "a filter on an encrypted field is dropped", Method: "GET", URL: "/api/v1/vault?filter=" + "secret%3D%27wrong%27", Admin: true,
			ExpectedStatus: http.StatusOK, ExpectedContent: []string{`"totalItems":1`}},
		{Name: "a sort on an encrypted field is ignored", Method: "GET", URL: "/api/v1/vault?sort=secret", Admin: true,
			ExpectedStatus: http.StatusOK, ExpectedContent: []string{`"totalItems":1`}},
		{Name: "unique and encrypted cannot both be set", Method: "POST", URL: "/api/v1/admin/collections", Admin: true,
			Body:           coll("u", "base", []map[string]any{f("x", "text", "encrypted", true, "unique", true)}),
			ExpectedStatus: http.StatusUnprocessableEntity, ExpectedContent: []string{"cannot both be set"}},
	})
	fp := string(must(t, s, "GET", "/api/v1/admin/security/fingerprints", s.AdminHeaders(t, nil)))
	if !strings.Contains(fp, `"jwt":"sha256:`) || !strings.Contains(fp, `"encryption":"sha256:`) {
		t.Fatalf("fingerprints: %s", fp)
	}
}

func TestSecretSettingsEncrypted(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{EncryptionKey: testEncKey})
	s.MustAdmin(t, http.StatusOK, "PATCH", "/api/v1/admin/settings", map[string]any{"smtp.pass": "smtp-plain-secret", "smtp.host": "mail.example.com"})
	if got := s.Stack.Engine.Setting("smtp.pass"); got != "smtp-plain-secret" {
		t.Fatalf("the engine reads %q", got)
	}
	if dbHolds(t, s, "smtp-plain-secret") {
		t.Fatal("a secret setting is in the database in plain text")
	}
	if !dbHolds(t, s, "mail.example.com") {
		t.Fatal("a plain setting should stay readable in the database")
	}
	if body := string(must(t, s, "GET", "/api/v1/admin/settings", s.AdminHeaders(t, nil))); strings.Contains(body, "smtp-plain-secret") {
		t.Fatalf("settings listing shows the secret: %s", body)
	}
}

func TestNoEncryptionKey(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	apitest.Run(t, s, []apitest.Scenario{
		{Name: "an encrypted field needs a key", Method: "POST", URL: "/api/v1/admin/collections", Admin: true,
			Body:           coll("v", "base", []map[string]any{f("x", "text", "encrypted", true)}),
			ExpectedStatus: http.StatusUnprocessableEntity, ExpectedContent: []string{"SVC_ENCRYPTION_KEY"}},
		{Name: "fingerprints without an encryption key", Method: "GET", URL: "/api/v1/admin/security/fingerprints", Admin: true,
			ExpectedStatus: http.StatusOK, ExpectedContent: []string{`"encryption":null`, `"jwt":"sha256:`}},
	})
}
