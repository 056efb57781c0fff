package mail_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"svcd/engine/mail"
)

func TestHTTPTransport(t *testing.T) {
	type got struct {
		method, path, auth, ctype string
		body                      map[string]string
	}
	reqs := make(chan got, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		g := got{method: r.Method, path: r.URL.Path, auth: r.Header.Get("Authorization"), ctype: r.Header.Get("Content-Type")}
		if err := json.Unmarshal(b, &g.body); err != nil {
			t.Errorf("body %s: %v", b, err)
		}
		reqs <- g
		w.WriteHeader(http.StatusAccepted)
	}))
	defer srv.Close()

	s := newSender(t, mail.Config{
		Transport: mail.TransportHTTP,
		From:      "Acme <no-reply@acme.test>",
		HTTP:      mail.HTTPConfig{URL: srv.URL + "/v1/send", APIKey: "k3y", Post: postWith(srv.Client())},
	})
	if err := s.Send(ctxT(t), otpMessage(t, "Ada <ada@example.test>")); err != nil {
		t.Fatalf("Send: %v", err)
	}
	g := <-reqs
	if g.method != http.MethodPost || g.path != "/v1/send" || g.auth != "Bearer k3y" || g.ctype != "application/json" {
		t.Errorf("request %s %s auth %q type %q", g.method, g.path, g.auth, g.ctype)
	}
	if g.body["from"] != "Acme <no-reply@acme.test>" || g.body["to"] != "ada@example.test" || g.body["subject"] != "Your Acme sign-in code" {
		t.Errorf("body %v", g.body)
	}
	if !strings.Contains(g.body["text"], "042917") || !strings.Contains(g.body["html"], "042917") {
		t.Errorf("body lacks the code: %v", g.body)
	}
	if len(g.body) != 5 {
		t.Errorf("body has keys %v, want from, to, subject, text, html", g.body)
	}
}

func TestHTTPTransportErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			t.Errorf("Authorization sent without an API key: %q", r.Header.Get("Authorization"))
		}
		w.WriteHeader(http.StatusUnprocessableEntity)
		_, _ = io.WriteString(w, "{\"error\":\"bad\nrecipient\"}")
	}))
	defer srv.Close()
	s := newSender(t, mail.Config{
		Transport: mail.TransportHTTP,
		From:      "no-reply@acme.test",
		HTTP:      mail.HTTPConfig{URL: srv.URL, Post: postWith(srv.Client())},
	})
	err := s.Send(ctxT(t), otpMessage(t, "ada@example.test"))
	if err == nil || !strings.Contains(err.Error(), "status 422") || !strings.Contains(err.Error(), `bad recipient`) {
		t.Fatalf("Send = %v, want status 422 with the body", err)
	}

	boom := errors.New("egress denied")
	s = newSender(t, mail.Config{
		Transport: mail.TransportHTTP,
		From:      "no-reply@acme.test",
		HTTP: mail.HTTPConfig{URL: "https://10.0.0.1/send", Post: func(context.Context, string, map[string]string, []byte) (int, []byte, error) {
			return 0, nil, boom
		}},
	})
	if err := s.Send(ctxT(t), otpMessage(t, "ada@example.test")); !errors.Is(err, boom) {
		t.Fatalf("Send = %v, want the Post error", err)
	}
}
