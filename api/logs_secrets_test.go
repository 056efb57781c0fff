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

// TestLogsKeepNoSecrets runs flows that carry each kind of secret (a
// bearer token, the admin cookie, passwords at setup, sign-in and sign-up,
// a secret setting, ?token=, an API token, a device token in the path)
// with the node's slog lines teed to its log folder at debug level, as
// svcd serve does; then no file of the folder holds any of them, while
// the flows' lines are there with their secrets redacted.
func TestLogsKeepNoSecrets(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{TeeLogs: true})
	owner := s.AdminToken(t) // setup with apitest.AdminPassword
	secrets := map[string]string{"owner token": owner, "admin password": apitest.AdminPassword}

	const wrongPassword = "wrong-horse-secret-77"
	secrets["wrong password"] = wrongPassword
	if res, _ := s.Do(t, "POST", "/api/v1/admin/auth/login", map[string]any{"email": apitest.AdminEmail, "password": wrongPassword}, nil); res.StatusCode != http.StatusBadRequest && res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a wrong password: %d", res.StatusCode)
	}
	res, _ := s.Do(t, "POST", "/api/v1/admin/auth/login", map[string]any{"email": apitest.AdminEmail, "password": apitest.AdminPassword}, nil)
	var cookie string
	for _, c := range res.Cookies() {
		if c.Value != "" {
			cookie = c.Name + "=" + c.Value
			secrets["cookie token"] = c.Value
		}
	}
	if cookie == "" {
		t.Fatal("sign-in set no cookie")
	}
	must(t, s, "GET", "/api/v1/auth/me", map[string]string{"Cookie": cookie})

	const smtpPassword, s3Secret = "smtp-secret-value-4711", "s3-secret-key-0815"
	secrets["smtp password setting"], secrets["s3 secret setting"] = smtpPassword, s3Secret
	s.MustAdmin(t, http.StatusOK, "PATCH", "/api/v1/admin/settings", map[string]any{"smtp.password": smtpPassword, "files.s3.secret_access_key": s3Secret})

	const queryToken = "query-token-secret-2468"
	secrets["?token="] = queryToken
	must(t, s, "GET", "/api/v1/admin/collections?token="+queryToken+"&perPage=5", bearer(owner))

	s.CreateCollection(t, usersCollection())
	user := signUp(t, s, "u@example.com")
	secrets["user token"], secrets["user password"] = user, userPassword

	minted := data(t, s, http.StatusCreated, "POST", "/api/v1/admin/api-tokens", map[string]any{"name": "ci", "scopes": []string{"admin"}}, bearer(owner))
	apiToken := minted["token"].(string)
	secrets["api token"] = apiToken
	must(t, s, "GET", "/api/v1/admin/collections", bearer(apiToken))

	const device = "device-token-secret-13579"
	secrets["device token"] = device
	s.Do(t, "DELETE", "/api/v1/notifications/devices/"+device, nil, bearer(user))

	s.Stack.Logs.Flush()
	var all []byte
	files, _ := filepath.Glob(filepath.Join(s.DataDir, "logs", "*.jsonl"))
	if len(files) == 0 {
		t.Fatal("no day file in the log folder")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	for what, secret := range secrets {
		if bytes.Contains(all, []byte(secret)) {
			i := bytes.Index(all, []byte(secret))
			t.Errorf("the %s is in the log folder: ...%s...", what, all[max(0, i-200):min(len(all), i+len(secret)+50)])
		}
	}
	text := string(all)
	for _, want := range []string{
		`"path":"/api/v1/admin/collections?perPage=5\u0026token=%5Bredacted%5D"`,
		`"path":"/api/v1/notifications/devices/[redacted]"`,
		`"route":"/api/v1/admin/settings"`,
		`"type":"api_token"`,
		`"kind":"app"`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the log folder has no %s", want)
		}
	}
}
