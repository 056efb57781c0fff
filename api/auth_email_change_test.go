package api_test

import (
	"net/http"
	"strings"
	"testing"

	"svcd/api/apitest"
)

// TestEmailChangeCluster: the confirmed email change on a three-node
// cluster with a real SMTP catcher. The request (on a follower) mails a
// token to the new address only; the confirmation (on the other follower)
// needs the account's password; afterwards the new email signs in, the old
// one does not, the session from before is refused on every node, and the
// token is spent. An address taken between request and confirmation is
// refused when the change is applied.
func TestEmailChangeCluster(t *testing.T) {
	t.Parallel()
	c := apitest.StartCluster(t, 3, apitest.Options{})
	c.AdminToken(t)
	leader := c.Leader(t)
	fs := c.Followers(t)
	b, d := fs[0], fs[1]
	leader.CreateCollection(t, members())
	register(t, leader, "members", "ann@example.com", userPassword)
	register(t, leader, "members", "bob@example.com", userPassword)
	c.Sync(t)
	annTok := signIn(t, b, "members", "ann@example.com", userPassword)["token"].(string)
	ann := bearer(annTok)
	const request = "/api/v1/auth/members/request-email-change"
	const confirm = "/api/v1/auth/members/confirm-email-change"

	// Refusals that need no mail.
	apitest.Run(t, b, []apitest.Scenario{
		{Name: "a guest is 401", Method: "POST", URL: request, Body: map[string]any{"new_email": "x@example.com"},
			ExpectedStatus: http.StatusUnauthorized},
		{Name: "an admin token is 403", Method: "POST", URL: request, Body: map[string]any{"new_email": "x@example.com"},
			Headers: bearer(b.AdminToken(t)), ExpectedStatus: http.StatusForbidden},
		{Name: "the current email (any case) is 422", Method: "POST", URL: request, Body: map[string]any{"new_email": "ANN@example.com"},
			Headers: ann, ExpectedStatus: http.StatusUnprocessableEntity, ExpectedContent: []string{`"new_email":"is the current email"`}},
		{Name: "another account's email (any case) is 422", Method: "POST", URL: request, Body: map[string]any{"new_email": "Bob@Example.com"},
			Headers: ann, ExpectedStatus: http.StatusUnprocessableEntity, ExpectedContent: []string{`"new_email":"is already in use"`}},
		{Name: "a malformed address is 422", Method: "POST", URL: request, Body: map[string]any{"new_email": "not-an-email"},
			Headers: ann, ExpectedStatus: http.StatusUnprocessableEntity, AfterFunc: apitest.Details("new_email")},
		{Name: "a blank address is 422", Method: "POST", URL: request, Body: map[string]any{},
			Headers: ann, ExpectedStatus: http.StatusUnprocessableEntity, AfterFunc: apitest.Details("new_email")},
		{Name: "hostile bodies are 400", Method: "POST", URL: request, Body: `{"new_email":["a@b.c"]}`,
			Headers: ann, ExpectedStatus: http.StatusBadRequest},
		{Name: "confirm without token or password is 422", Method: "POST", URL: confirm, Body: map[string]any{},
			ExpectedStatus: http.StatusUnprocessableEntity, AfterFunc: apitest.Details("token", "password")},
		{Name: "a session token is not a change token (400)", Method: "POST", URL: confirm,
			Body: map[string]any{"token": annTok, "password": userPassword}, ExpectedStatus: http.StatusBadRequest},
	})

	md := startMaildev(t)
	md.configure(t, leader)
	c.Sync(t)
	data(t, b, http.StatusOK, "POST", request, map[string]any{"new_email": "Ann.New@example.com"}, ann)
	msg := md.await(t, "ann.new@example.com", 1)
	if !strings.Contains(msg.Subject, "Confirm your new") || !strings.Contains(msg.Text, "https://app.acme.test/auth/confirm-email-change?collection=members&token=") {
		t.Errorf("email change message: %q\n%s", msg.Subject, msg.Text)
	}
	tok := tokenIn(t, msg)
	if n := len(md.messages(t, "ann@example.com")); n != 0 {
		t.Errorf("%d messages to the old address", n)
	}

	// The account's realtime stream, on the node that will not answer the
	// confirmation.
	stream := openSSE(t, b, "topics=members", ann)
	if f := stream.next(); f.event != "subscribed" {
		t.Fatalf("frame %+v", f)
	}

	apitest.Run(t, d, []apitest.Scenario{
		{Name: "a wrong password is 400 naming password", Method: "POST", URL: confirm,
			Body: map[string]any{"token": tok, "password": "not-the-password"}, ExpectedStatus: http.StatusBadRequest,
			AfterFunc: apitest.Details("password")},
		{Name: "the change token is no session", Method: "GET", URL: "/api/v1/auth/me", Headers: bearer(tok),
			ExpectedStatus: http.StatusUnauthorized},
		{Name: "confirm with the password changes the email", Method: "POST", URL: confirm,
			Body: map[string]any{"token": tok, "password": userPassword}, ExpectedStatus: http.StatusOK,
			ExpectedContent: []string{`{"data":{"changed":true}}`}, ExpectedHeaders: map[string]string{"X-Svc-Index": "*"}},
		{Name: "confirm twice is 400", Method: "POST", URL: confirm,
			Body: map[string]any{"token": tok, "password": userPassword}, ExpectedStatus: http.StatusBadRequest},
	})

	// The stream closes as for a password change (its own record's update
	// may come first).
	f := stream.next()
	for f.event != "error" {
		f = stream.next()
	}
	if f.data["code"] != "unauthorized" {
		t.Fatalf("frame %+v, want an unauthorized error", f)
	}
	stream.ended()

	for _, n := range c.Nodes {
		if res, body := n.Do(t, "GET", "/api/v1/auth/me", nil, ann); res.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: the session from before the change: %d %s", n.Stack.Node.NodeID(), res.StatusCode, body)
		}
		if res, body := n.Do(t, "POST", "/api/v1/auth/members/login", map[string]any{"email": "ann@example.com", "password": userPassword}, nil); res.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: the old email signs in: %d %s", n.Stack.Node.NodeID(), res.StatusCode, body)
		}
		rec := apitest.Obj(t, signIn(t, n, "members", "ann.new@example.com", userPassword)["record"])
		if rec["email"] != "Ann.New@example.com" || rec["email_verified"] != true {
			t.Errorf("%s: record after the change: %v", n.Stack.Node.NodeID(), rec)
		}
	}

	t.Run("an address taken between request and confirmation is refused at apply", func(t *testing.T) {
		bob := bearer(signIn(t, b, "members", "bob@example.com", userPassword)["token"].(string))
		data(t, b, http.StatusOK, "POST", request, map[string]any{"new_email": "carol@example.com"}, bob)
		tok := tokenIn(t, md.await(t, "carol@example.com", 1))
		register(t, leader, "members", "CAROL@example.com", userPassword)
		out := data(t, d, http.StatusUnprocessableEntity, "POST", confirm, map[string]any{"token": tok, "password": userPassword}, nil)
		if det, _ := out["details"].(map[string]any); det["new_email"] != "is already in use" {
			t.Fatalf("confirming onto a taken address: %v", out)
		}
		signIn(t, b, "members", "bob@example.com", userPassword)
		if res, body := b.Do(t, "GET", "/api/v1/auth/me", nil, bob); res.StatusCode != http.StatusOK {
			t.Fatalf("bob's session after the refused change: %d %s", res.StatusCode, body)
		}
	})
}
