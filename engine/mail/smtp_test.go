package mail_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	netmail "net/mail"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"svcd/engine/mail"
)

// parsed is a received message taken apart: headers and decoded parts.
type parsed struct {
	Header netmail.Header
	Text   string
	HTML   string
}

func parseMessage(t *testing.T, raw []byte) parsed {
	t.Helper()
	m, err := netmail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("read message: %v\n%s", err, raw)
	}
	p := parsed{Header: m.Header}
	readPart(t, m.Header.Get("Content-Type"), m.Header.Get("Content-Transfer-Encoding"), m.Body, &p)
	return p
}

func readPart(t *testing.T, ctype, cte string, body io.Reader, p *parsed) {
	t.Helper()
	mt, params, err := mime.ParseMediaType(ctype)
	if err != nil {
		t.Fatalf("content type %q: %v", ctype, err)
	}
	if strings.HasPrefix(mt, "multipart/") {
		mr := multipart.NewReader(body, params["boundary"])
		for {
			part, err := mr.NextRawPart()
			if err == io.EOF {
				return
			}
			if err != nil {
				t.Fatalf("multipart: %v", err)
			}
			readPart(t, part.Header.Get("Content-Type"), part.Header.Get("Content-Transfer-Encoding"), part, p)
		}
	}
	switch strings.ToLower(cte) {
	case "quoted-printable":
		body = quotedprintable.NewReader(body)
	case "base64":
		body = base64.NewDecoder(base64.StdEncoding, body)
	}
	b, err := io.ReadAll(body)
	if err != nil {
		t.Fatalf("read part %s: %v", mt, err)
	}
	switch mt {
	case "text/plain":
		p.Text = string(b)
	case "text/html":
		p.HTML = string(b)
	default:
		t.Fatalf("unexpected part %s", mt)
	}
}

func otpMessage(t *testing.T, to string) mail.Message {
	t.Helper()
	c, err := mail.OTPEmail(mail.Input{AppName: "Acme", AppURL: "https://acme.test", Collection: "users", Token: "link-token-abc", Code: "042917", Expires: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return c.To(to)
}

func newSender(t *testing.T, cfg mail.Config) *mail.Sender {
	t.Helper()
	s, err := mail.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// A real message over an unencrypted loopback connection with AUTH PLAIN
// (smtp.secure=none): envelope, headers, both parts and the code arrive.
func TestSMTPPlainAuthLoopback(t *testing.T) {
	srv := startSMTP(t, serverOpts{user: "mailer", pass: "s3cret pass"})
	s := newSender(t, mail.Config{
		Transport: mail.TransportSMTP,
		From:      "Acme <no-reply@acme.test>",
		SMTP:      mail.SMTPConfig{Host: "127.0.0.1", Port: srv.Port, Security: mail.SecurityNone, User: "mailer", Pass: "s3cret pass"},
	})
	if err := s.Send(ctxT(t), otpMessage(t, "Ada <ada@example.test>")); err != nil {
		t.Fatalf("Send: %v", err)
	}
	msgs := srv.messages()
	if len(msgs) != 1 {
		t.Fatalf("server got %d messages, want 1", len(msgs))
	}
	r := msgs[0]
	if r.User != "mailer" || r.TLS {
		t.Errorf("auth user %q tls %v, want mailer over plain TCP", r.User, r.TLS)
	}
	if r.From != "no-reply@acme.test" || len(r.To) != 1 || r.To[0] != "ada@example.test" {
		t.Errorf("envelope from %q to %q", r.From, r.To)
	}
	p := parseMessage(t, r.Data)
	for k, want := range map[string]string{
		"From":           `"Acme" <no-reply@acme.test>`,
		"To":             `"Ada" <ada@example.test>`,
		"Subject":        "Your Acme sign-in code",
		"Auto-Submitted": "auto-generated",
		"Mime-Version":   "1.0",
	} {
		if got := p.Header.Get(k); got != want {
			t.Errorf("header %s = %q, want %q", k, got, want)
		}
	}
	if id := p.Header.Get("Message-Id"); !strings.HasSuffix(id, "@acme.test>") {
		t.Errorf("Message-Id %q not under the sender's domain", id)
	}
	if _, err := p.Header.Date(); err != nil {
		t.Errorf("Date: %v", err)
	}
	if ua := p.Header.Get("User-Agent") + p.Header.Get("X-Mailer"); ua != "" {
		t.Errorf("mailer advertised: %q", ua)
	}
	mt, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
	if mt != "multipart/alternative" {
		t.Errorf("Content-Type %q, want multipart/alternative", mt)
	}
	for _, part := range []string{p.Text, p.HTML} {
		if !strings.Contains(part, "042917") {
			t.Errorf("part lacks the code:\n%s", part)
		}
	}
	if !strings.Contains(p.Text, "https://acme.test/auth/otp?collection=users&token=link-token-abc") {
		t.Errorf("text lacks the link:\n%s", p.Text)
	}
	if !strings.Contains(p.HTML, `href="https://acme.test/auth/otp?collection=users&amp;token=link-token-abc"`) {
		t.Errorf("html lacks the link:\n%s", p.HTML)
	}
}

func TestSMTPWrongPassword(t *testing.T) {
	srv := startSMTP(t, serverOpts{user: "mailer", pass: "right"})
	s := newSender(t, mail.Config{
		Transport: mail.TransportSMTP,
		From:      "no-reply@acme.test",
		SMTP:      mail.SMTPConfig{Host: "127.0.0.1", Port: srv.Port, Security: mail.SecurityNone, User: "mailer", Pass: "wrong"},
	})
	if err := s.Send(ctxT(t), otpMessage(t, "ada@example.test")); err == nil {
		t.Fatal("Send with a wrong password succeeded")
	}
	if n := len(srv.messages()); n != 0 {
		t.Fatalf("server accepted %d messages", n)
	}
}

// The default mode requires STARTTLS: a server that does not offer it gets
// nothing, credentials least of all.
func TestSMTPStartTLSRequired(t *testing.T) {
	srv := startSMTP(t, serverOpts{user: "mailer", pass: "pw"})
	s := newSender(t, mail.Config{
		Transport: mail.TransportSMTP,
		From:      "no-reply@acme.test",
		SMTP:      mail.SMTPConfig{Host: "127.0.0.1", Port: srv.Port, User: "mailer", Pass: "pw"},
	})
	err := s.Send(ctxT(t), otpMessage(t, "ada@example.test"))
	if err == nil || !strings.Contains(err.Error(), "STARTTLS") {
		t.Fatalf("Send = %v, want a STARTTLS error", err)
	}
	if n := len(srv.messages()); n != 0 {
		t.Fatalf("server accepted %d messages", n)
	}
}

func TestSMTPStartTLS(t *testing.T) {
	cert, pool := testCert(t)
	srv := startSMTP(t, serverOpts{user: "mailer", pass: "pw", starttls: &tls.Config{Certificates: []tls.Certificate{cert}}})
	var dials atomic.Int32
	s := newSender(t, mail.Config{
		Transport: mail.TransportSMTP,
		From:      "no-reply@acme.test",
		SMTP: mail.SMTPConfig{
			Host: "127.0.0.1", Port: srv.Port, Security: mail.SecurityStartTLS, User: "mailer", Pass: "pw",
			TLSConfig: &tls.Config{RootCAs: pool},
			Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
				dials.Add(1)
				var d net.Dialer
				return d.DialContext(ctx, network, addr)
			},
		},
	})
	if err := s.Send(ctxT(t), otpMessage(t, "ada@example.test")); err != nil {
		t.Fatalf("Send: %v", err)
	}
	msgs := srv.messages()
	if len(msgs) != 1 || !msgs[0].TLS || msgs[0].User != "mailer" {
		t.Fatalf("messages %+v, want one over TLS as mailer", msgs)
	}
	if dials.Load() != 1 {
		t.Errorf("Dial hook called %d times, want 1", dials.Load())
	}
}

// An untrusted certificate is refused (no setting skips verification).
func TestSMTPStartTLSUntrusted(t *testing.T) {
	cert, _ := testCert(t)
	srv := startSMTP(t, serverOpts{starttls: &tls.Config{Certificates: []tls.Certificate{cert}}})
	s := newSender(t, mail.Config{
		Transport: mail.TransportSMTP,
		From:      "no-reply@acme.test",
		SMTP:      mail.SMTPConfig{Host: "127.0.0.1", Port: srv.Port},
	})
	if err := s.Send(ctxT(t), otpMessage(t, "ada@example.test")); err == nil {
		t.Fatal("Send to an untrusted certificate succeeded")
	}
	if n := len(srv.messages()); n != 0 {
		t.Fatalf("server accepted %d messages", n)
	}
}

// Implicit TLS, also through a caller's Dial hook (go-mail does not wrap a
// custom dialer in TLS by itself; the Sender must).
func TestSMTPImplicitTLS(t *testing.T) {
	cert, pool := testCert(t)
	srv := startSMTP(t, serverOpts{user: "mailer", pass: "pw", implicit: &tls.Config{Certificates: []tls.Certificate{cert}}})
	for _, hook := range []bool{false, true} {
		cfg := mail.Config{
			Transport: mail.TransportSMTP,
			From:      "no-reply@acme.test",
			SMTP: mail.SMTPConfig{
				Host: "127.0.0.1", Port: srv.Port, Security: mail.SecurityTLS, User: "mailer", Pass: "pw",
				TLSConfig: &tls.Config{RootCAs: pool},
			},
		}
		if hook {
			cfg.SMTP.Dial = (&net.Dialer{}).DialContext
		}
		if err := newSender(t, cfg).Send(ctxT(t), otpMessage(t, "ada@example.test")); err != nil {
			t.Fatalf("Send (dial hook %v): %v", hook, err)
		}
	}
	msgs := srv.messages()
	if len(msgs) != 2 {
		t.Fatalf("server got %d messages, want 2", len(msgs))
	}
	for _, m := range msgs {
		if !m.TLS || m.User != "mailer" {
			t.Errorf("message %+v not authenticated over TLS", m)
		}
	}
}

func TestSendRejectsBadMessages(t *testing.T) {
	s := newSender(t, mail.Config{
		Transport: mail.TransportSMTP,
		From:      "no-reply@acme.test",
		SMTP:      mail.SMTPConfig{Host: "127.0.0.1", Port: 1, Security: mail.SecurityNone},
	})
	for _, m := range []mail.Message{
		{To: "not an address", Subject: "s", Text: "t"},
		{To: "a@b.test\r\nBcc: c@d.test", Subject: "s", Text: "t"},
		{To: "a@b.test", Subject: "", Text: "t"},
		{To: "a@b.test", Subject: "s\r\nBcc: c@d.test", Text: "t"},
		{To: "a@b.test", Subject: "s", Text: ""},
	} {
		if err := s.Send(t.Context(), m); err == nil || !strings.Contains(err.Error(), "invalid message") {
			t.Errorf("Send(%+v) = %v, want an invalid message error", m, err)
		}
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	post := func(context.Context, string, map[string]string, []byte) (int, []byte, error) { return 200, nil, nil }
	for name, cfg := range map[string]mail.Config{
		"no from":        {Transport: mail.TransportSMTP, SMTP: mail.SMTPConfig{Host: "h"}},
		"bad from":       {Transport: mail.TransportSMTP, From: "no at sign", SMTP: mail.SMTPConfig{Host: "h"}},
		"no transport":   {From: "a@b.test"},
		"no host":        {Transport: mail.TransportSMTP, From: "a@b.test"},
		"bad port":       {Transport: mail.TransportSMTP, From: "a@b.test", SMTP: mail.SMTPConfig{Host: "h", Port: 70000}},
		"pass no user":   {Transport: mail.TransportSMTP, From: "a@b.test", SMTP: mail.SMTPConfig{Host: "h", Pass: "p"}},
		"bad security":   {Transport: mail.TransportSMTP, From: "a@b.test", SMTP: mail.SMTPConfig{Host: "h", Security: 9}},
		"no url":         {Transport: mail.TransportHTTP, From: "a@b.test", HTTP: mail.HTTPConfig{Post: post}},
		"ftp url":        {Transport: mail.TransportHTTP, From: "a@b.test", HTTP: mail.HTTPConfig{URL: "ftp://x", Post: post}},
		"url with creds": {Transport: mail.TransportHTTP, From: "a@b.test", HTTP: mail.HTTPConfig{URL: "https://u:p@x", Post: post}},
		"no post":        {Transport: mail.TransportHTTP, From: "a@b.test", HTTP: mail.HTTPConfig{URL: "https://x"}},
	} {
		if _, err := mail.New(cfg); !errors.Is(err, mail.ErrInvalidConfig) {
			t.Errorf("%s: New = %v, want ErrInvalidConfig", name, err)
		}
	}
}

// With smtp.secure=none the password goes out in the clear to any host,
// not only to a localhost name (go-mail's PLAIN allows that by itself):
// this is what SMTPAuthPlainNoEnc is for. The Dial hook sends the
// connection for a non-local name to the loopback server.
func TestSMTPNoneAuthNonLocalName(t *testing.T) {
	srv := startSMTP(t, serverOpts{user: "mailer", pass: "pw"})
	s := newSender(t, mail.Config{
		Transport: mail.TransportSMTP,
		From:      "no-reply@acme.test",
		SMTP: mail.SMTPConfig{
			Host: "relay.internal.test", Port: 2525, Security: mail.SecurityNone, User: "mailer", Pass: "pw",
			Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
				if addr != "relay.internal.test:2525" {
					t.Errorf("dial %s", addr)
				}
				var d net.Dialer
				return d.DialContext(ctx, network, srv.Addr)
			},
		},
	})
	if err := s.Send(ctxT(t), otpMessage(t, "ada@example.test")); err != nil {
		t.Fatalf("Send: %v", err)
	}
	if msgs := srv.messages(); len(msgs) != 1 || msgs[0].User != "mailer" {
		t.Fatalf("messages %+v", msgs)
	}
}
