package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"svcd/api/apitest"
)

// vectorBatch is a batch of n creates in embs, each a vector of dims
// numbers in their longest JSON form: 25 characters (-0.0000012345678901234567,
// what JavaScript's JSON.stringify writes for a double of 17 significant
// digits just above 1e-6), separated by ", " as Python's json.dumps does:
// 27 bytes a number.
func vectorBatch(n, dims int) string {
	num := "-0.0000012345678901234567"
	vec := "[" + strings.Repeat(num+", ", dims-1) + num + "]"
	var b strings.Builder
	b.WriteString(`{"requests": [`)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(`{"method": "POST", "url": "/api/v1/embs", "body": {"title": "vector number ` + strings.Repeat("x", 40) + `", "emb": ` + vec + `}}`)
	}
	b.WriteString("]}")
	return b.String()
}

// TestBodyLimitSetting: JSON bodies are limited by the runtime setting
// http.max_body_bytes. Its default (16 MiB) admits the largest batch SPEC.md
// allows (100 operations) of the largest vectors (4096 dimensions) written
// at their longest; a body over the limit is a 413 in the error envelope
// naming the setting, whether it declares its length or not; the setting
// cannot go below 64 KiB (the settings route must stay usable), and null
// restores the default.
func TestBodyLimitSetting(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, public(coll("embs", "base", []map[string]any{f("title", "text"), f("emb", "vector", "dimensions", 4096)})))
	s.CreateCollection(t, public(coll("notes", "base", []map[string]any{f("body", "json")})))
	batch := vectorBatch(100, 4096)
	if len(batch) < 11_000_000 {
		t.Fatalf("the batch is %d bytes, want the honest worst case (over 11 MB)", len(batch))
	}
	t.Logf("100 creates of 4096-dimension vectors: %d bytes (%.2f MiB)", len(batch), float64(len(batch))/(1<<20))
	note := func(n int) string { return `{"body": "` + strings.Repeat("n", n) + `"}` }
	tooLarge := []string{`"code":413`, "Request body too large", "http.max_body_bytes"}
	apitest.Run(t, s, []apitest.Scenario{
		{
			Name: "the default admits 100 creates of 4096-dimension vectors (anonymous)", Method: http.MethodPost,
			URL: "/api/v1/batch", Body: batch, ExpectedStatus: http.StatusOK, ExpectedContent: []string{`"status":201`},
		},
		{
			Name: "lower the limit to 64 KiB", Method: http.MethodPatch, URL: settingsURL, Admin: true,
			Body: map[string]any{"http.max_body_bytes": 65536}, ExpectedStatus: http.StatusOK,
			ExpectedContent: []string{`"http.max_body_bytes":"65536"`},
		},
		{
			Name: "a body over it is a 413", Method: http.MethodPost, URL: "/api/v1/notes", Body: note(100 << 10),
			ExpectedStatus: http.StatusRequestEntityTooLarge, ExpectedContent: tooLarge,
		},
		{
			Name: "for admins too", Method: http.MethodPost, URL: "/api/v1/notes", Body: note(100 << 10), Admin: true,
			ExpectedStatus: http.StatusRequestEntityTooLarge, ExpectedContent: tooLarge,
		},
		{
			Name: "and for a batch", Method: http.MethodPost, URL: "/api/v1/batch", Body: batch,
			ExpectedStatus: http.StatusRequestEntityTooLarge, ExpectedContent: tooLarge,
		},
		{
			Name: "a body under it passes", Method: http.MethodPost, URL: "/api/v1/notes", Body: note(60 << 10),
			ExpectedStatus: http.StatusCreated,
		},
		{
			Name: "the floor is 64 KiB", Method: http.MethodPatch, URL: settingsURL, Admin: true,
			Body: map[string]any{"http.max_body_bytes": 10}, ExpectedStatus: http.StatusOK,
		},
		{
			Name: "a body under the floor passes", Method: http.MethodPost, URL: "/api/v1/notes", Body: note(60 << 10),
			ExpectedStatus: http.StatusCreated,
		},
		{
			Name: "not a number is refused", Method: http.MethodPatch, URL: settingsURL, Admin: true,
			Body: map[string]any{"http.max_body_bytes": "lots"}, ExpectedStatus: http.StatusUnprocessableEntity,
		},
		{
			Name: "null restores the default", Method: http.MethodPatch, URL: settingsURL, Admin: true,
			Body: map[string]any{"http.max_body_bytes": nil}, ExpectedStatus: http.StatusOK,
			ExpectedContent: []string{`"http.max_body_bytes":"16777216"`},
		},
		{
			Name: "then the large body passes", Method: http.MethodPost, URL: "/api/v1/notes", Body: note(100 << 10),
			ExpectedStatus: http.StatusCreated,
		},
	})

	// A chunked body (no declared length) over the limit is cut as it is
	// read: 413 too.
	s.MustAdmin(t, http.StatusOK, http.MethodPatch, settingsURL, map[string]any{"http.max_body_bytes": 65536})
	conn := rawBody(t, s, http.MethodPost, "/api/v1/notes", -1, nil)
	chunk := strings.Repeat("n", 32<<10)
	for range 3 {
		if _, err := conn.Write([]byte("8000\r\n" + chunk + "\r\n")); err != nil {
			break // the server answered and closed
		}
	}
	if status, b, err := rawAnswer(conn, 5*time.Second); err != nil || status != http.StatusRequestEntityTooLarge {
		t.Errorf("chunked body over the limit: %d %s %v, want 413", status, b, err)
	}
}
