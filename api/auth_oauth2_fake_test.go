package api_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// fakeProviders is one local server that answers, under /<provider>/,
// what each provider's authorization, token and API endpoints answer:
// their JSON shapes, their way of taking the client's credentials (HTTP
// Basic or the form), single-use codes bound to the redirect URI, PKCE
// (S256) and, for Apple, a client secret signed with the team's key and
// ID tokens signed with the provider's key.
type fakeProviders struct {
	t   testing.TB
	srv *httptest.Server
	// idKey signs ID tokens; appleKey is the team's key the node signs
	// Apple client secrets with (its PEM goes to the settings).
	idKey    *rsa.PrivateKey
	appleKey *ecdsa.PrivateKey

	mu     sync.Mutex
	rows   map[string]*providerRow
	grants map[string]*fakeGrant // by code
	tokens map[string]string     // access token -> provider
	// tweak spoils the next ID token: "aud", "iss", "key" or "" (none).
	tweak string
}

// fakeGrant is one authorization the fake gave a code for.
type fakeGrant struct {
	provider, redirect, challenge, nonce string
	used                                 bool
}

func newFakeProviders(t testing.TB) *fakeProviders {
	t.Helper()
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ek, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeProviders{t: t, idKey: rk, appleKey: ek, rows: map[string]*providerRow{}, grants: map[string]*fakeGrant{}, tokens: map[string]string{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// url is the fake's URL of path under provider p.
func (f *fakeProviders) url(p, path string) string { return f.srv.URL + "/" + p + path }

// applePEM is the team key as Apple hands it out (PKCS #8 PEM).
func (f *fakeProviders) applePEM() string {
	der, err := x509.MarshalPKCS8PrivateKey(f.appleKey)
	if err != nil {
		f.t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
}

func (f *fakeProviders) serve(w http.ResponseWriter, r *http.Request) {
	p, path, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	path = "/" + path
	f.mu.Lock()
	row := f.rows[p]
	f.mu.Unlock()
	if row == nil {
		http.NotFound(w, r)
		return
	}
	switch {
	case path == "/authorize":
		f.authorize(w, r, p, row)
	case path == "/token":
		f.token(w, r, p, row)
	case path == "/keys":
		f.jwks(w)
	default:
		f.api(w, r, p, row, path)
	}
}

// authorize signs the user in at once and sends them back with a code.
func (f *fakeProviders) authorize(w http.ResponseWriter, r *http.Request, p string, row *providerRow) {
	q := r.URL.Query()
	if q.Get("client_id") != "client-"+p || q.Get("response_type") != "code" || q.Get("redirect_uri") == "" {
		oauthError(w, 400, "invalid_request")
		return
	}
	if q.Get("code_challenge") != "" && q.Get("code_challenge_method") != "S256" {
		oauthError(w, 400, "invalid_request")
		return
	}
	code := fmt.Sprintf("code-%s-%d", p, time.Now().UnixNano())
	f.mu.Lock()
	f.grants[code] = &fakeGrant{provider: p, redirect: q.Get("redirect_uri"), challenge: q.Get("code_challenge"), nonce: q.Get("nonce")}
	f.mu.Unlock()
	back, _ := url.Parse(q.Get("redirect_uri"))
	bq := back.Query()
	bq.Set("code", code)
	bq.Set("state", q.Get("state"))
	back.RawQuery = bq.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

// token exchanges a code, checking the client as the provider would.
func (f *fakeProviders) token(w http.ResponseWriter, r *http.Request, p string, row *providerRow) {
	if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") != "authorization_code" {
		oauthError(w, 400, "invalid_request")
		return
	}
	id, secret, basic := r.BasicAuth()
	if basic {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	} else {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	if basic != (row.style == "header") {
		oauthError(w, 401, "invalid_client") // this provider takes the other way
		return
	}
	if id != "client-"+p || !f.secretOK(p, secret) {
		oauthError(w, 401, "invalid_client")
		return
	}
	f.mu.Lock()
	g := f.grants[r.PostForm.Get("code")]
	ok := g != nil && !g.used && g.provider == p && g.redirect == r.PostForm.Get("redirect_uri")
	if ok && g.challenge != "" {
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		ok = base64.RawURLEncoding.EncodeToString(sum[:]) == g.challenge
	}
	if ok {
		g.used = true
	}
	access := fmt.Sprintf("at-%s-%d", p, time.Now().UnixNano())
	f.tokens[access] = p
	tweak := f.tweak
	f.tweak = ""
	f.mu.Unlock()
	if !ok {
		oauthError(w, 400, "invalid_grant")
		return
	}
	if row.tokenForm {
		w.Header().Set("Content-Type", "application/x-www-form-urlencoded")
		fmt.Fprintf(w, "access_token=%s&scope=read%%3Auser&token_type=bearer", access)
		return
	}
	ans := map[string]any{"access_token": access, "token_type": "Bearer", "expires_in": 3600}
	if row.idToken != nil {
		ans["id_token"] = f.idToken(p, g.nonce, row.idToken, tweak)
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(ans)
}

// secretOK checks the client secret: Apple's is a JWT the node signs
// with the team's key; the others' is the configured string.
func (f *fakeProviders) secretOK(p, secret string) bool {
	if p != "apple" {
		return secret == "secret-"+p
	}
	tok, err := jwt.Parse(secret, func(t *jwt.Token) (any, error) { return &f.appleKey.PublicKey, nil },
		jwt.WithValidMethods([]string{"ES256"}), jwt.WithIssuer("TEAM123456"), jwt.WithSubject("client-apple"),
		jwt.WithAudience("https://appleid.apple.com"), jwt.WithExpirationRequired())
	return err == nil && tok.Header["kid"] == "KEY1234567"
}

// idToken signs an ID token with the provider's key (or, tweaked,
// another audience, issuer or key).
func (f *fakeProviders) idToken(p, nonce string, claims map[string]any, tweak string) string {
	c := jwt.MapClaims{"iss": "https://appleid.apple.com", "aud": "client-" + p, "iat": time.Now().Unix(),
		"exp": time.Now().Add(10 * time.Minute).Unix(), "nonce": nonce}
	for k, v := range claims {
		c[k] = v
	}
	key := f.idKey
	switch tweak {
	case "aud":
		c["aud"] = "another-client"
	case "iss":
		c["iss"] = "https://evil.example"
	case "key":
		other, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			f.t.Fatal(err)
		}
		key = other
	}
	t := jwt.NewWithClaims(jwt.SigningMethodRS256, c)
	t.Header["kid"] = "k1"
	s, err := t.SignedString(key)
	if err != nil {
		f.t.Fatal(err)
	}
	return s
}

// jwks serves the ID token key as Apple's /auth/keys does.
func (f *fakeProviders) jwks(w http.ResponseWriter) {
	pub := f.idKey.PublicKey
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"keys": []map[string]any{{
		"kty": "RSA", "kid": "k1", "use": "sig", "alg": "RS256",
		"n": base64.RawURLEncoding.EncodeToString(pub.N.Bytes()),
		"e": base64.RawURLEncoding.EncodeToString(big.NewInt(int64(pub.E)).Bytes()),
	}}})
}

// api answers the provider's API with the row's bodies, for its own
// access tokens and with the headers the provider requires.
func (f *fakeProviders) api(w http.ResponseWriter, r *http.Request, p string, row *providerRow, path string) {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	f.mu.Lock()
	owner := f.tokens[tok]
	f.mu.Unlock()
	if !ok || owner != p {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	for k, v := range row.headers {
		if r.Header.Get(k) != v {
			http.Error(w, "missing header "+k, http.StatusBadRequest)
			return
		}
	}
	body, ok := row.answers[path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(body))
}

func oauthError(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"error":%q}`, code)
}
