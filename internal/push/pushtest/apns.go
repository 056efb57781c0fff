package pushtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// APNs is a stand-in for Apple's push service: HTTP/2 over TLS, token
// authentication.
type APNs struct {
	*recorder
	Server *httptest.Server
	TeamID string
	KeyID  string
	// KeyPEM is the .p8 key (PKCS #8 PEM) the provider token is signed
	// with.
	KeyPEM string
	// Topic is the app's bundle id the stand-in accepts.
	Topic string

	key *ecdsa.PrivateKey
}

// ProbeToken is a token no device has: the stand-in answers it 400
// BadDeviceToken, as APNs does.
const ProbeToken = "0000000000000000000000000000000000000000000000000000000000000000"

// NewAPNs starts the stand-in; the test's end stops it.
func NewAPNs(t testing.TB) *APNs {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	a := &APNs{recorder: newRecorder(t), TeamID: "TEAM123456", KeyID: "KEY1234567", Topic: "com.example.app", key: key,
		KeyPEM: string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /3/device/{token}", a.push)
	a.Server = httptest.NewUnstartedServer(mux)
	a.Server.EnableHTTP2 = true
	a.Server.StartTLS()
	t.Cleanup(a.Server.Close)
	return a
}

// URL is the host setting.
func (a *APNs) URL() string { return a.Server.URL }

// Roots trust the stand-in's certificate.
func (a *APNs) Roots() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(a.Server.Certificate())
	return pool
}

func apnsFail(w http.ResponseWriter, status int, reason string) {
	w.Header().Set("apns-id", "00000000-0000-0000-0000-000000000000")
	body := map[string]any{"reason": reason}
	if status == http.StatusGone {
		body["timestamp"] = time.Now().UnixMilli()
	}
	writeJSON(w, status, body)
}

// push is POST /3/device/<token>: HTTP/2, a provider token signed ES256
// by the team's key (kid the key id, iss the team id, iat within the
// hour), the app's topic, a push type, and an aps dictionary.
func (a *APNs) push(w http.ResponseWriter, r *http.Request) {
	if r.ProtoMajor != 2 {
		a.refuse("not HTTP/2: " + r.Proto)
		apnsFail(w, http.StatusBadRequest, "BadPath")
		return
	}
	auth := r.Header.Get("Authorization")
	if !strings.HasPrefix(strings.ToLower(auth), "bearer ") {
		a.refuse("no provider token")
		apnsFail(w, http.StatusForbidden, "MissingProviderToken")
		return
	}
	claims := jwt.MapClaims{}
	tok, err := jwt.ParseWithClaims(auth[7:], claims, func(tk *jwt.Token) (any, error) {
		return &a.key.PublicKey, nil
	}, jwt.WithValidMethods([]string{"ES256"}), jwt.WithIssuer(a.TeamID), jwt.WithIssuedAt())
	if err == nil {
		iat, _ := claims.GetIssuedAt()
		switch {
		case tok.Header["kid"] != a.KeyID:
			err = jwt.ErrTokenInvalidId
		case iat == nil || time.Since(iat.Time) > time.Hour:
			err = jwt.ErrTokenExpired
		}
	}
	if err != nil {
		a.refuse("provider token: " + err.Error())
		apnsFail(w, http.StatusForbidden, "InvalidProviderToken")
		return
	}
	if topic := r.Header.Get("apns-topic"); topic != a.Topic {
		a.refuse("topic " + topic)
		apnsFail(w, http.StatusBadRequest, "DeviceTokenNotForTopic")
		return
	}
	if r.Header.Get("apns-push-type") == "" {
		a.refuse("no apns-push-type")
		apnsFail(w, http.StatusBadRequest, "InvalidPushType")
		return
	}
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	if json.Unmarshal(raw, &body) != nil {
		a.refuse("payload is not JSON")
		apnsFail(w, http.StatusBadRequest, "PayloadEmpty")
		return
	}
	aps, _ := body["aps"].(map[string]any)
	if aps == nil {
		a.refuse("payload without aps")
		apnsFail(w, http.StatusBadRequest, "PayloadEmpty")
		return
	}
	token := r.PathValue("token")
	if token == ProbeToken {
		a.replyFor(token)
		apnsFail(w, http.StatusBadRequest, "BadDeviceToken")
		return
	}
	if rep := a.replyFor(token); rep.Status != 0 && rep.Status != http.StatusOK {
		apnsFail(w, rep.Status, rep.Code)
		return
	}
	alert, _ := aps["alert"].(map[string]any)
	title, _ := alert["title"].(string)
	text, _ := alert["body"].(string)
	data := map[string]any{}
	for k, v := range body {
		if k != "aps" {
			data[k] = v
		}
	}
	a.accept(Received{Target: token, Title: title, Body: text, Data: data, Key: r.Header.Get("apns-collapse-id"),
		Header: r.Header.Clone(), Raw: raw})
	w.Header().Set("apns-id", "11111111-1111-1111-1111-111111111111")
	w.WriteHeader(http.StatusOK)
}
