package pushtest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"
)

// FCM is a stand-in for Firebase Cloud Messaging's HTTP v1 API and
// Google's OAuth2 token endpoint.
type FCM struct {
	*recorder
	Server *httptest.Server
	// ProjectID is the project the service account names.
	ProjectID string
	// ServiceAccount is a service account key file (JSON) whose
	// token_uri is the stand-in's token endpoint.
	ServiceAccount string
	// ClientEmail is the account's email (the JWT's issuer).
	ClientEmail string

	key      *rsa.PrivateKey
	issued   map[string]bool
	tokenReq int
	// tokenStatus, when set, fails the token endpoint with it.
	tokenStatus int
}

// NewFCM starts the stand-in; the test's end stops it.
func NewFCM(t testing.TB) *FCM {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	f := &FCM{recorder: newRecorder(t), ProjectID: "svc-test-project", ClientEmail: "push@svc-test-project.iam.gserviceaccount.com",
		key: key, issued: map[string]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /token", f.token)
	mux.HandleFunc("POST /v1/projects/{project}/messages:send", f.send)
	f.Server = httptest.NewServer(mux)
	t.Cleanup(f.Server.Close)
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	sa, _ := json.Marshal(map[string]string{
		"type": "service_account", "project_id": f.ProjectID, "private_key_id": "k1",
		"private_key":  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email": f.ClientEmail, "client_id": "1", "token_uri": f.TokenURL(),
	})
	f.ServiceAccount = string(sa)
	return f
}

// TokenURL is the stand-in's token endpoint.
func (f *FCM) TokenURL() string { return f.Server.URL + "/token" }

// URL is the API's base (the endpoint setting).
func (f *FCM) URL() string { return f.Server.URL }

// FailTokens makes the token endpoint answer status (0: issue tokens).
func (f *FCM) FailTokens(status int) {
	f.mu.Lock()
	f.tokenStatus = status
	f.mu.Unlock()
}

// TokenRequests counts the access tokens asked for.
func (f *FCM) TokenRequests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tokenReq
}

// token is the two-legged JWT flow: the assertion must be signed (RS256)
// by the service account's key, issued by its email, for this endpoint,
// with the messaging scope.
func (f *FCM) token(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.tokenReq++
	status := f.tokenStatus
	f.mu.Unlock()
	if status != 0 {
		writeJSON(w, status, map[string]string{"error": "unavailable", "error_description": "the stand-in was told to fail"})
		return
	}
	if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" {
		f.refuse("token: grant_type is not jwt-bearer")
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type"})
		return
	}
	claims := jwt.MapClaims{}
	_, err := jwt.ParseWithClaims(r.PostForm.Get("assertion"), claims, func(tk *jwt.Token) (any, error) {
		return &f.key.PublicKey, nil
	}, jwt.WithValidMethods([]string{"RS256"}), jwt.WithIssuer(f.ClientEmail), jwt.WithAudience(f.TokenURL()), jwt.WithExpirationRequired())
	if err == nil && !strings.Contains(fmt.Sprint(claims["scope"]), "https://www.googleapis.com/auth/firebase.messaging") {
		err = fmt.Errorf("scope %v lacks firebase.messaging", claims["scope"])
	}
	if err != nil {
		f.refuse("token: " + err.Error())
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant", "error_description": err.Error()})
		return
	}
	b := make([]byte, 16)
	rand.Read(b)
	tok := "ya29." + hex.EncodeToString(b)
	f.mu.Lock()
	f.issued[tok] = true
	f.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 3600})
}

// fcmFail answers FCM's error body: the status, its gRPC name, and the
// FCM error code in details when there is one.
func fcmFail(w http.ResponseWriter, status int, errorCode, msg string) {
	e := map[string]any{"code": status, "message": msg, "status": map[int]string{400: "INVALID_ARGUMENT",
		401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED",
		500: "INTERNAL", 503: "UNAVAILABLE"}[status]}
	if errorCode != "" {
		e["details"] = []map[string]string{{"@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": errorCode}}
	}
	writeJSON(w, status, map[string]any{"error": e})
}

// send is messages:send: a bearer token the endpoint issued, the
// account's project, one message for one token, data values strings.
func (f *FCM) send(w http.ResponseWriter, r *http.Request) {
	auth := r.Header.Get("Authorization")
	f.mu.Lock()
	ok := strings.HasPrefix(auth, "Bearer ") && f.issued[strings.TrimPrefix(auth, "Bearer ")]
	f.mu.Unlock()
	if !ok {
		f.refuse("send: bearer token not issued by the token endpoint: " + auth)
		fcmFail(w, http.StatusUnauthorized, "", "Request had invalid authentication credentials.")
		return
	}
	if p := r.PathValue("project"); p != f.ProjectID {
		f.refuse("send: project " + p)
		fcmFail(w, http.StatusForbidden, "", "Permission denied on project "+p)
		return
	}
	raw, _ := io.ReadAll(r.Body)
	var body struct {
		Message struct {
			Token        string            `json:"token"`
			Notification map[string]string `json:"notification"`
			Data         map[string]any    `json:"data"`
			Android      struct {
				Notification struct {
					Tag string `json:"tag"`
				} `json:"notification"`
			} `json:"android"`
		} `json:"message"`
	}
	if err := json.Unmarshal(raw, &body); err != nil || body.Message.Token == "" {
		f.refuse("send: not a message for one token: " + string(raw))
		fcmFail(w, http.StatusBadRequest, "INVALID_ARGUMENT", "Invalid JSON payload received.")
		return
	}
	for k, v := range body.Message.Data {
		if _, isString := v.(string); !isString {
			f.refuse("send: data value " + k + " is not a string")
			fcmFail(w, http.StatusBadRequest, "INVALID_ARGUMENT", "Invalid value at 'message.data[0].value' (TYPE_STRING)")
			return
		}
	}
	m := body.Message
	if rep := f.replyFor(m.Token); rep.Status != 0 && rep.Status != http.StatusOK {
		fcmFail(w, rep.Status, rep.Code, "the stand-in was told to fail this token")
		return
	}
	f.accept(Received{Target: m.Token, Title: m.Notification["title"], Body: m.Notification["body"], Data: m.Data,
		Key: m.Android.Notification.Tag, Header: r.Header.Clone(), Raw: raw})
	writeJSON(w, http.StatusOK, map[string]string{"name": "projects/" + f.ProjectID + "/messages/0:1"})
}
