package pushtest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// Hosted is a stand-in for the hosted push provider's REST API
// (OneSignal's v1): POST /notifications, GET /notifications.
type Hosted struct {
	*recorder
	Server *httptest.Server
	AppID  string
	// APIKey is the REST API key, expected raw in "Basic <key>".
	APIKey string
}

// NewHosted starts the stand-in; the test's end stops it.
func NewHosted(t testing.TB) *Hosted {
	t.Helper()
	h := &Hosted{recorder: newRecorder(t), AppID: "5eb5a37e-b458-11e3-ac11-000c2940e62c", APIKey: "os_v2_app_restkey123"}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /notifications", h.send)
	mux.HandleFunc("GET /notifications", h.list)
	h.Server = httptest.NewServer(mux)
	t.Cleanup(h.Server.Close)
	return h
}

// URL is the endpoint setting.
func (h *Hosted) URL() string { return h.Server.URL }

// authorized checks the raw REST key in Basic auth.
func (h *Hosted) authorized(w http.ResponseWriter, r *http.Request) bool {
	if got := r.Header.Get("Authorization"); got != "Basic "+h.APIKey {
		h.refuse("authorization " + got)
		writeJSON(w, http.StatusForbidden, map[string]any{"errors": []string{"Access denied.  Please include an 'Authorization: ...' header with a valid API key"}})
		return false
	}
	return true
}

func (h *Hosted) list(w http.ResponseWriter, r *http.Request) {
	if !h.authorized(w, r) {
		return
	}
	if r.URL.Query().Get("app_id") != h.AppID {
		h.refuse("list: app_id " + r.URL.Query().Get("app_id"))
		writeJSON(w, http.StatusBadRequest, map[string]any{"errors": []string{"app_id not found"}})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"total_count": 0, "offset": 0, "limit": 1, "notifications": []any{}})
}

// send checks the app, one external user id, contents, and answers as
// the test said for that user.
func (h *Hosted) send(w http.ResponseWriter, r *http.Request) {
	if !h.authorized(w, r) {
		return
	}
	raw, _ := io.ReadAll(r.Body)
	var body struct {
		AppID      string            `json:"app_id"`
		Users      []string          `json:"include_external_user_ids"`
		Channel    string            `json:"channel_for_external_user_ids"`
		Headings   map[string]string `json:"headings"`
		Contents   map[string]string `json:"contents"`
		Data       map[string]any    `json:"data"`
		ExternalID string            `json:"external_id"`
	}
	if err := json.Unmarshal(raw, &body); err != nil || body.AppID != h.AppID || len(body.Users) != 1 || body.Contents["en"] == "" {
		h.refuse("send: " + string(raw))
		writeJSON(w, http.StatusBadRequest, map[string]any{"errors": []string{"invalid notification"}})
		return
	}
	user := body.Users[0]
	if rep := h.replyFor(user); rep.Status != 0 && rep.Status != http.StatusOK {
		writeJSON(w, rep.Status, map[string]any{"errors": []string{"the stand-in was told to fail " + rep.Code}})
		return
	}
	h.accept(Received{Target: user, Title: body.Headings["en"], Body: body.Contents["en"], Data: body.Data, Key: body.ExternalID,
		Header: r.Header.Clone(), Raw: raw})
	writeJSON(w, http.StatusOK, map[string]any{"id": "b98881cc-1e94-4366-bbd9-db8f3429292b", "recipients": 1, "external_id": body.ExternalID})
}
