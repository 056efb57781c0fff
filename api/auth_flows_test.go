package api_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"svcd/api/apitest"
)

// Scenario tests of the mail flows: password reset, email verification
// and email OTP, each through a real SMTP catcher; codes and links are
// read from the messages it received.

// members is an auth collection with every feature of auth_options on.
func members() map[string]any {
	return coll("members", "auth", []map[string]any{f("name", "text")},
		"create_rule", "", "view_rule", "id = @request.auth.id", "update_rule", "id = @request.auth.id",
		"auth_options", map[string]any{"password": true, "otp": true, "anonymous": true, "mfa": true, "oauth2": true})
}

// register signs up email in collection c with password pw.
func register(t testing.TB, s *apitest.Server, c, email, pw string) string {
	t.Helper()
	res, body := s.Do(t, http.MethodPost, "/api/v1/auth/"+c+"/register", map[string]any{"email": email, "password": pw}, nil)
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("register %s: %d %s", email, res.StatusCode, body)
	}
	return apitest.Obj(t, apitest.DecodeMap(t, body)["data"])["id"].(string)
}

// signIn signs in to collection c and returns the data member.
func signIn(t testing.TB, s *apitest.Server, c, email, pw string) map[string]any {
	t.Helper()
	res, body := s.Do(t, http.MethodPost, "/api/v1/auth/"+c+"/login", map[string]any{"email": email, "password": pw}, nil)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("login %s: %d %s", email, res.StatusCode, body)
	}
	return apitest.Obj(t, apitest.DecodeMap(t, body)["data"])
}

// data posts body to path and returns the data member, requiring status.
func data(t testing.TB, s *apitest.Server, want int, method, path string, body any, headers map[string]string) map[string]any {
	t.Helper()
	res, out := s.Do(t, method, path, body, headers)
	apitest.CheckCommon(t, res, out)
	if res.StatusCode != want {
		t.Fatalf("%s %s: %d, want %d: %s", method, path, res.StatusCode, want, out)
	}
	if want >= 400 {
		return apitest.DecodeMap(t, out)
	}
	return apitest.Obj(t, apitest.DecodeMap(t, out)["data"])
}

func TestPasswordReset(t *testing.T) {
	t.Parallel()
	clock := newClock()
	s := apitest.Start(t, apitest.Options{Clock: clock.Now})
	s.CreateCollection(t, usersCollection())
	s.CreateCollection(t, coll("posts", "base", nil))
	s.CreateCollection(t, coll("nopw", "auth", nil, "auth_options", map[string]any{"password": false}))
	id := register(t, s, "users", "ann@example.com", userPassword)
	old := signIn(t, s, "users", "ann@example.com", userPassword)["token"].(string)
	const url = "/api/v1/auth/users/request-password-reset"

	apitest.Run(t, s, []apitest.Scenario{
		{Name: "without mail configured it answers sent (TestMailRequestsWithoutMail)", Method: "POST", URL: url,
			Body:           map[string]any{"email": "ann@example.com"},
			ExpectedStatus: http.StatusOK, ExpectedContent: []string{`{"data":{"sent":true}}`}},
		{Name: "auth_options.password off: 422", Method: "POST", URL: "/api/v1/auth/nopw/request-password-reset",
			Body:           map[string]any{"email": "ann@example.com"},
			ExpectedStatus: http.StatusUnprocessableEntity, ExpectedContent: []string{"Password sign-in is disabled"}},
		{Name: "and confirming too", Method: "POST", URL: "/api/v1/auth/nopw/confirm-password-reset",
			Body:           map[string]any{"token": "x", "password": "a-long-password-1"},
			ExpectedStatus: http.StatusUnprocessableEntity},
	})

	md := startMaildev(t)
	md.configure(t, s)
	var tok string
	apitest.Run(t, s, []apitest.Scenario{
		{Name: "an unknown address answers sent", Method: "POST", URL: url,
			Body: map[string]any{"email": "nobody@example.com"}, ExpectedStatus: http.StatusOK, ExpectedContent: []string{`{"data":{"sent":true}}`}},
		{Name: "a known address answers the same", Method: "POST", URL: url,
			Body: map[string]any{"email": "ANN@example.com"}, ExpectedStatus: http.StatusOK, ExpectedContent: []string{`{"data":{"sent":true}}`},
			AfterFunc: func(t testing.TB, s *apitest.Server, body []byte) {
				msg := md.await(t, "ann@example.com", 1)
				if !strings.Contains(msg.Subject, "Reset your") || !strings.Contains(msg.Text, "https://app.acme.test/auth/reset-password?collection=users&token=") {
					t.Errorf("reset message: %q\n%s", msg.Subject, msg.Text)
				}
				tok = tokenIn(t, msg)
				if n := len(md.messages(t, "nobody@example.com")); n != 0 {
					t.Errorf("%d messages to an address with no account", n)
				}
			}},
		{Name: "a malformed address is 422", Method: "POST", URL: url,
			Body: map[string]any{"email": "not-an-email"}, ExpectedStatus: http.StatusUnprocessableEntity, AfterFunc: apitest.Details("email")},
		{Name: "a base collection is 404", Method: "POST", URL: "/api/v1/auth/posts/request-password-reset",
			Body: map[string]any{"email": "ann@example.com"}, ExpectedStatus: http.StatusNotFound},
		{Name: "a body that is not JSON is 400", Method: "POST", URL: url, Body: "{", ExpectedStatus: http.StatusBadRequest},
	})

	const confirm = "/api/v1/auth/users/confirm-password-reset"
	newPassword := "a-brand-new-password"
	apitest.Run(t, s, []apitest.Scenario{
		{Name: "confirm without token or password is 422", Method: "POST", URL: confirm, Body: map[string]any{},
			ExpectedStatus: http.StatusUnprocessableEntity, AfterFunc: apitest.Details("token", "password")},
		{Name: "confirm with a garbage token is 400", Method: "POST", URL: confirm,
			Body: map[string]any{"token": "abc.def.ghi", "password": newPassword}, ExpectedStatus: http.StatusBadRequest},
		{Name: "a session token is not a reset token (400)", Method: "POST", URL: confirm,
			Body: map[string]any{"token": old, "password": newPassword}, ExpectedStatus: http.StatusBadRequest},
		{Name: "the password policy applies (422)", Method: "POST", URL: confirm,
			BeforeFunc: func(t testing.TB, s *apitest.Server) {
				if tok == "" {
					t.Fatal("no reset token")
				}
				// Token times are whole seconds: let the session from
				// before be from an earlier second than the reset.
				clock.Advance(time.Second)
			},
			Body: map[string]any{"token": &tok, "password": "short"}, ExpectedStatus: http.StatusUnprocessableEntity,
			AfterFunc: apitest.Details("password")},
		{Name: "confirm sets the password", Method: "POST", URL: confirm,
			Body: map[string]any{"token": &tok, "password": newPassword}, ExpectedStatus: http.StatusOK,
			ExpectedContent: []string{`{"data":{"reset":true}}`}, ExpectedHeaders: map[string]string{"X-Svc-Index": "*"}},
		{Name: "the token is single-use (400)", Method: "POST", URL: confirm,
			Body: map[string]any{"token": &tok, "password": "yet-another-password"}, ExpectedStatus: http.StatusBadRequest},
	})

	t.Run("older sessions end; the new password signs in; the email counts as verified", func(t *testing.T) {
		if res, body := s.Do(t, "GET", "/api/v1/auth/me", nil, bearer(old)); res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("a session from before the reset: %d %s", res.StatusCode, body)
		}
		if res, _ := s.Do(t, "GET", "/api/v1/auth/me", nil, bearer(tok)); res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("the reset token as a bearer: %d", res.StatusCode)
		}
		res, body := s.Do(t, "POST", "/api/v1/auth/users/login", map[string]any{"email": "ann@example.com", "password": userPassword}, nil)
		if res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("old password: %d %s", res.StatusCode, body)
		}
		sess := signIn(t, s, "users", "ann@example.com", newPassword)
		if rec := apitest.Obj(t, sess["record"]); rec["email_verified"] != true || rec["id"] != id {
			t.Fatalf("record after reset: %v", rec)
		}
	})

	t.Run("a second reset spends the tokens issued before the first", func(t *testing.T) {
		for range 2 {
			data(t, s, http.StatusOK, "POST", url, map[string]any{"email": "ann@example.com"}, nil)
		}
		first, second := tokenIn(t, md.await(t, "ann@example.com", 2)), tokenIn(t, md.await(t, "ann@example.com", 3))
		// Tokens are newer than the last reset only when issued in a later
		// second than it.
		clock.Advance(time.Second)
		data(t, s, http.StatusOK, "POST", url, map[string]any{"email": "ann@example.com"}, nil)
		third := tokenIn(t, md.await(t, "ann@example.com", 4))
		data(t, s, http.StatusOK, "POST", confirm, map[string]any{"token": third, "password": "third-password-123"}, nil)
		for _, tk := range []string{first, second} {
			data(t, s, http.StatusBadRequest, "POST", confirm, map[string]any{"token": tk, "password": "fourth-password-123"}, nil)
		}
		signIn(t, s, "users", "ann@example.com", "third-password-123")
	})
}

func TestEmailVerification(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, usersCollection())
	md := startMaildev(t)
	md.configure(t, s)
	register(t, s, "users", "bob@example.com", userPassword)
	register(t, s, "users", "cy@example.com", userPassword)
	bob := signIn(t, s, "users", "bob@example.com", userPassword)
	if apitest.Obj(t, bob["record"])["email_verified"] != false {
		t.Fatalf("a new account is verified: %v", bob["record"])
	}
	const req, confirm = "/api/v1/auth/users/request-verification", "/api/v1/auth/users/confirm-verification"
	var tok string
	apitest.Run(t, s, []apitest.Scenario{
		{Name: "request answers sent", Method: "POST", URL: req, Body: map[string]any{"email": "bob@example.com"},
			ExpectedStatus: http.StatusOK, ExpectedContent: []string{`"sent":true`},
			AfterFunc: func(t testing.TB, s *apitest.Server, body []byte) {
				msg := md.await(t, "bob@example.com", 1)
				if !strings.Contains(msg.Text, "https://app.acme.test/auth/verify-email?collection=users&token=") {
					t.Errorf("verification message: %s", msg.Text)
				}
				tok = tokenIn(t, msg)
			}},
		{Name: "unknown address: the same answer", Method: "POST", URL: req, Body: map[string]any{"email": "zed@example.com"},
			ExpectedStatus: http.StatusOK, ExpectedContent: []string{`"sent":true`}},
		{Name: "confirm without a token is 422", Method: "POST", URL: confirm, Body: map[string]any{},
			ExpectedStatus: http.StatusUnprocessableEntity, AfterFunc: apitest.Details("token")},
		{Name: "confirm with a session token is 400", Method: "POST", URL: confirm, Body: map[string]any{"token": bob["token"]},
			ExpectedStatus: http.StatusBadRequest},
		{Name: "confirm marks the account verified", Method: "POST", URL: confirm, Body: map[string]any{"token": &tok},
			ExpectedStatus: http.StatusOK, ExpectedContent: []string{`{"data":{"verified":true}}`}},
		{Name: "confirming again is harmless", Method: "POST", URL: confirm, Body: map[string]any{"token": &tok},
			ExpectedStatus: http.StatusOK},
		{Name: "the verification token is not a reset token", Method: "POST", URL: "/api/v1/auth/users/confirm-password-reset",
			Body: map[string]any{"token": &tok, "password": "some-new-password"}, ExpectedStatus: http.StatusBadRequest},
	})
	rec := apitest.Obj(t, signIn(t, s, "users", "bob@example.com", userPassword)["record"])
	if rec["email_verified"] != true {
		t.Fatalf("after confirm: %v", rec)
	}
	t.Run("a verified account gets no second message", func(t *testing.T) {
		data(t, s, http.StatusOK, "POST", req, map[string]any{"email": "bob@example.com"}, nil)
		data(t, s, http.StatusOK, "POST", req, map[string]any{"email": "cy@example.com"}, nil)
		md.await(t, "cy@example.com", 1)
		if n := len(md.messages(t, "bob@example.com")); n != 1 {
			t.Fatalf("bob has %d messages", n)
		}
	})
}

func TestEmailOTP(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, members())
	s.CreateCollection(t, usersCollection()) // auth_options.otp off
	uid := register(t, s, "members", "dan@example.com", userPassword)
	const req, auth = "/api/v1/auth/members/otp/request", "/api/v1/auth/members/otp/auth"

	apitest.Run(t, s, []apitest.Scenario{
		{Name: "off by default (auth.otp.enabled=0): request is 422", Method: "POST", URL: req,
			Body: map[string]any{"email": "dan@example.com"}, ExpectedStatus: http.StatusUnprocessableEntity, ExpectedContent: []string{"Email OTP is disabled"}},
		{Name: "and auth is 422", Method: "POST", URL: auth,
			Body: map[string]any{"email": "dan@example.com", "code": "123456"}, ExpectedStatus: http.StatusUnprocessableEntity},
		{Name: "the global switch on", Method: "PATCH", URL: settingsURL, Admin: true,
			Body: map[string]any{"auth.otp.enabled": "1"}, ExpectedStatus: http.StatusOK},
		{Name: "a collection with auth_options.otp off is still 422", Method: "POST", URL: "/api/v1/auth/users/otp/request",
			Body: map[string]any{"email": "dan@example.com"}, ExpectedStatus: http.StatusUnprocessableEntity},
		{Name: "no mail: sent all the same", Method: "POST", URL: req,
			Body: map[string]any{"email": "dan@example.com"}, ExpectedStatus: http.StatusOK, ExpectedContent: []string{`{"data":{"sent":true}}`}},
		{Name: "neither token nor code: 422", Method: "POST", URL: auth, Body: map[string]any{},
			ExpectedStatus: http.StatusUnprocessableEntity, AfterFunc: apitest.Details("token")},
		{Name: "a code that is not 6 digits: 422", Method: "POST", URL: auth, Body: map[string]any{"code": "12ab56", "email": "dan@example.com"},
			ExpectedStatus: http.StatusUnprocessableEntity, AfterFunc: apitest.Details("code")},
		{Name: "a code with no token issued: 401", Method: "POST", URL: auth, Body: map[string]any{"code": "123456", "email": "dan@example.com"},
			ExpectedStatus: http.StatusUnauthorized, ExpectedContent: []string{"Invalid credentials"}},
		{Name: "a code for an unknown email: the same 401", Method: "POST", URL: auth, Body: map[string]any{"code": "123456", "email": "nobody@example.com"},
			ExpectedStatus: http.StatusUnauthorized, ExpectedContent: []string{"Invalid credentials"}},
		{Name: "an unknown link token: 401", Method: "POST", URL: auth, Body: map[string]any{"token": "nope"},
			ExpectedStatus: http.StatusUnauthorized},
	})

	md := startMaildev(t)
	md.configure(t, s)
	data(t, s, http.StatusUnprocessableEntity, "POST", req, map[string]any{"email": "dan@"}, nil)
	request := func(t testing.TB, email string) {
		t.Helper()
		if d := data(t, s, http.StatusOK, "POST", req, map[string]any{"email": email}, nil); d["sent"] != true {
			t.Fatalf("request: %v", d)
		}
	}
	n := 0 // messages dan has
	next := func(t testing.TB) message {
		t.Helper()
		n++
		return md.await(t, "dan@example.com", n)
	}
	// erin's wrong codes are counted apart from dan's: each account has a
	// budget of ten wrong codes per 15 minutes.
	register(t, s, "members", "erin@example.com", userPassword)
	erinN := 0
	nextErin := func(t testing.TB) message {
		t.Helper()
		erinN++
		return md.await(t, "erin@example.com", erinN)
	}

	t.Run("the code signs in after wrong codes, once, and verifies the email", func(t *testing.T) {
		request(t, "dan@example.com")
		request(t, "nobody@example.com")
		msg := next(t)
		code := codeIn(t, msg)
		if strings.Contains(msg.Subject, code) || !strings.Contains(msg.Text, "https://app.acme.test/auth/otp?collection=members&token=") {
			t.Fatalf("otp message %q:\n%s", msg.Subject, msg.Text)
		}
		wrong := "000000"
		if code == wrong {
			wrong = "111111"
		}
		for range 4 {
			data(t, s, http.StatusUnauthorized, "POST", auth, map[string]any{"code": wrong, "email": "dan@example.com"}, nil)
		}
		sess := data(t, s, http.StatusOK, "POST", auth, map[string]any{"code": code, "email": "DAN@example.com"}, nil)
		rec := apitest.Obj(t, sess["record"])
		if rec["id"] != uid || rec["email_verified"] != true || sess["token"] == "" {
			t.Fatalf("session: %v", sess)
		}
		data(t, s, http.StatusOK, "GET", "/api/v1/auth/me", nil, bearer(sess["token"].(string)))
		data(t, s, http.StatusUnauthorized, "POST", auth, map[string]any{"code": code, "email": "dan@example.com"}, nil)
		data(t, s, http.StatusUnauthorized, "POST", auth, map[string]any{"token": tokenIn(t, msg)}, nil)
		if len(md.messages(t, "nobody@example.com")) != 0 {
			t.Fatal("a message to an address with no account")
		}
	})

	t.Run("the link token signs in, once", func(t *testing.T) {
		request(t, "dan@example.com")
		tok := tokenIn(t, next(t))
		data(t, s, http.StatusOK, "POST", auth, map[string]any{"token": tok}, nil)
		data(t, s, http.StatusUnauthorized, "POST", auth, map[string]any{"token": tok}, nil)
	})

	t.Run("five wrong codes burn the token, link included", func(t *testing.T) {
		request(t, "erin@example.com")
		msg := nextErin(t)
		code := codeIn(t, msg)
		wrong := "999999"
		if code == wrong {
			wrong = "888888"
		}
		for range 5 {
			data(t, s, http.StatusUnauthorized, "POST", auth, map[string]any{"code": wrong, "email": "erin@example.com"}, nil)
		}
		data(t, s, http.StatusUnauthorized, "POST", auth, map[string]any{"code": code, "email": "erin@example.com"}, nil)
		data(t, s, http.StatusUnauthorized, "POST", auth, map[string]any{"token": tokenIn(t, msg)}, nil)
	})

	t.Run("ten wrong codes spend the account's budget: a new OTP's right code is 429", func(t *testing.T) {
		// erin has six wrong codes above (five, and the burned token's).
		request(t, "erin@example.com")
		code := codeIn(t, nextErin(t))
		wrong := "999999"
		if code == wrong {
			wrong = "888888"
		}
		for range 4 {
			data(t, s, http.StatusUnauthorized, "POST", auth, map[string]any{"code": wrong, "email": "erin@example.com"}, nil)
		}
		res, body := s.Do(t, "POST", auth, map[string]any{"code": code, "email": "erin@example.com"}, nil)
		if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" {
			t.Fatalf("the right code after ten wrong ones: %d %s", res.StatusCode, body)
		}
		// The link token is not a guess: it still signs in.
		request(t, "erin@example.com")
		data(t, s, http.StatusOK, "POST", auth, map[string]any{"token": tokenIn(t, nextErin(t))}, nil)
	})

	t.Run("a new request replaces the earlier token", func(t *testing.T) {
		request(t, "dan@example.com")
		first := codeIn(t, next(t))
		request(t, "dan@example.com")
		second := codeIn(t, next(t))
		if first != second {
			data(t, s, http.StatusUnauthorized, "POST", auth, map[string]any{"code": first, "email": "dan@example.com"}, nil)
		}
		data(t, s, http.StatusOK, "POST", auth, map[string]any{"code": second, "email": "dan@example.com"}, nil)
	})

	t.Run("a known and an unknown address take the same time", func(t *testing.T) {
		// Interleaved requests; the medians of the two kinds of answer.
		var known, unknown []time.Duration
		for i := range 16 {
			email, into := "dan@example.com", &known
			if i%2 == 1 {
				email, into = fmt.Sprintf("ghost%d@example.com", i), &unknown
			}
			start := time.Now()
			request(t, email)
			*into = append(*into, time.Since(start))
		}
		n += 8
		md.await(t, "dan@example.com", n)
		mk, mu := median(known), median(unknown)
		t.Logf("median answer: known %v, unknown %v", mk, mu)
		if d := mk - mu; d > 5*time.Millisecond || d < -5*time.Millisecond {
			t.Fatalf("known %v vs unknown %v: the answer's time tells them apart", mk, mu)
		}
	})

	t.Run("anonymous accounts are skipped", func(t *testing.T) {
		s.MustAdmin(t, http.StatusOK, "PATCH", settingsURL, map[string]any{"auth.anonymous.enabled": "1"})
		guest := data(t, s, http.StatusOK, "POST", "/api/v1/auth/members/anonymous", nil, nil)
		email := apitest.Obj(t, guest["record"])["email"].(string)
		request(t, email)
		request(t, "dan@example.com")
		next(t)
		if got := md.messages(t, email); len(got) != 0 {
			t.Fatalf("a guest got %d messages", len(got))
		}
	})
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// TestMailRequestsWithoutMail: with no outbound mail configured, the
// requests that send mail (password reset, email verification, email OTP)
// answer SPEC.md's {sent: true}, the same bytes for an account and for an
// address with none, send nothing and log a warning per request that
// names the flow and the collection, never the address. A malformed
// address or a disabled feature is still refused.
func TestMailRequestsWithoutMail(t *testing.T) {
	t.Parallel()
	logs := &logCapture{}
	s := apitest.Start(t, apitest.Options{Logger: logs.logger()})
	s.CreateCollection(t, members())
	s.CreateCollection(t, usersCollection()) // auth_options.otp off
	register(t, s, "members", "ann@example.com", userPassword)
	s.MustAdmin(t, http.StatusOK, http.MethodPatch, settingsURL, map[string]any{"auth.otp.enabled": "1"})

	const sent = `{"data":{"sent":true}}` + "\n"
	flows := []struct{ what, path string }{
		{"password reset", "request-password-reset"},
		{"email verification", "request-verification"},
		{"email otp", "otp/request"},
	}
	var want int
	for _, fl := range flows {
		for _, email := range []string{"ann@example.com", "nobody@example.com", "ANN@Example.com"} {
			res, body := s.Do(t, http.MethodPost, "/api/v1/auth/members/"+fl.path, map[string]any{"email": email}, nil)
			if res.StatusCode != http.StatusOK || string(body) != sent {
				t.Errorf("%s for %s without mail: %d %s, want 200 %s", fl.what, email, res.StatusCode, body, sent)
			}
			want++
		}
	}
	apitest.Run(t, s, []apitest.Scenario{
		{Name: "a malformed address is still 422", Method: "POST", URL: "/api/v1/auth/members/request-password-reset",
			Body: map[string]any{"email": "not-an-email"}, ExpectedStatus: http.StatusUnprocessableEntity, AfterFunc: apitest.Details("email")},
		{Name: "a disabled feature is still 422", Method: "POST", URL: "/api/v1/auth/users/otp/request",
			Body: map[string]any{"email": "ann@example.com"}, ExpectedStatus: http.StatusUnprocessableEntity, ExpectedContent: []string{"Email OTP is disabled"}},
		{Name: "an unknown collection is still 404", Method: "POST", URL: "/api/v1/auth/nosuch/request-password-reset",
			Body: map[string]any{"email": "ann@example.com"}, ExpectedStatus: http.StatusNotFound},
	})

	warned := logs.records(t, "auth mail not sent")
	if len(warned) != want {
		t.Fatalf("%d warnings for %d requests without mail:\n%s", len(warned), want, logs.text())
	}
	seen := map[string]int{}
	for _, w := range warned {
		if w["level"] != "WARN" || w["collection"] != "members" || !strings.Contains(w["msg"].(string), "not configured") {
			t.Errorf("warning %v: want level WARN, collection members and the reason", w)
		}
		seen[fmt.Sprint(w["what"])]++
	}
	for _, fl := range flows {
		if seen[fl.what] != 3 {
			t.Errorf("%d warnings name %q, want 3 (%v)", seen[fl.what], fl.what, seen)
		}
	}
	if text := strings.ToLower(logs.text()); strings.Contains(text, "ann@example.com") || strings.Contains(text, "nobody@example.com") {
		t.Errorf("the log names an address a request carried:\n%s", logs.text())
	}
	// Nothing was issued: no OTP token, so a code is refused.
	data(t, s, http.StatusUnauthorized, "POST", "/api/v1/auth/members/otp/auth", map[string]any{"email": "ann@example.com", "code": "123456"}, nil)
}
