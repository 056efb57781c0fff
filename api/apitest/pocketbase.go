package apitest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// pocketBasePath tells the paths of the PocketBase layer (api/pbcompat):
// everything under /api/ outside /api/v1. Their errors are PocketBase's
// envelope, not svcd's.
func pocketBasePath(path string) bool {
	return strings.HasPrefix(path, "/api/") && path != "/api/v1" && !strings.HasPrefix(path, "/api/v1/")
}

// CheckPocketBaseError checks an error answer of the PocketBase layer:
// exactly {status, message, data} (pb:tools/router/error.go ApiError),
// status equal to the HTTP status, a message ending with a period, data an
// object whose members are {code, message} or nested objects of them.
func CheckPocketBaseError(t testing.TB, res *http.Response, body []byte) {
	t.Helper()
	where := res.Request.Method + " " + res.Request.URL.Path
	var env map[string]json.RawMessage
	if err := json.NewDecoder(bytes.NewReader(body)).Decode(&env); err != nil {
		t.Errorf("%s: PocketBase error body is not a JSON object: %q", where, body)
		return
	}
	for k := range env {
		if k != "status" && k != "message" && k != "data" {
			t.Errorf("%s: unexpected member %q in PocketBase's envelope: %s", where, k, body)
		}
	}
	var status int
	if err := json.Unmarshal(env["status"], &status); err != nil || status != res.StatusCode {
		t.Errorf("%s: envelope status %s, want %d", where, env["status"], res.StatusCode)
	}
	var msg string
	if err := json.Unmarshal(env["message"], &msg); err != nil || !strings.HasSuffix(msg, ".") {
		t.Errorf("%s: envelope message %s is not a sentence", where, env["message"])
	}
	var data map[string]any
	if err := json.Unmarshal(env["data"], &data); err != nil || data == nil {
		t.Errorf("%s: envelope data %s is not an object", where, env["data"])
	}
	checkPBFieldErrors(t, where, data)
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("%s: error Content-Type %q", where, ct)
	}
}

func checkPBFieldErrors(t testing.TB, where string, data map[string]any) {
	t.Helper()
	for k, v := range data {
		m, ok := v.(map[string]any)
		if !ok {
			t.Errorf("%s: data.%s is %v, not an object", where, k, v)
			continue
		}
		code, hasCode := m["code"].(string)
		if !hasCode {
			checkPBFieldErrors(t, where+" data."+k, m)
			continue
		}
		if msg, _ := m["message"].(string); code == "" || msg == "" {
			t.Errorf("%s: data.%s = %v, want {code, message}", where, k, m)
		}
	}
}
