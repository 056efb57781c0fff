package api_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"svcd/api/apitest"
	"svcd/engine/mail"
)

// TestMailThroughMaildev: engine/mail's SMTP transport against a real SMTP
// catcher process (npm maildev@2) requiring AUTH: the message is read back
// through maildev's HTTP API, and a wrong password is refused by the real
// server too. (The auth-flow tests send through the same catcher end to
// end; this one checks the sender's envelope, headers and parts.)
func TestMailThroughMaildev(t *testing.T) {
	md := apitest.StartMaildev(t, "mailer", "pw-123")
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	sender := func(pass string) *mail.Sender {
		s, err := mail.New(mail.Config{
			Transport: mail.TransportSMTP,
			From:      "Acme <no-reply@acme.test>",
			SMTP:      mail.SMTPConfig{Host: "127.0.0.1", Port: md.SMTPPort, Security: mail.SecurityNone, User: "mailer", Pass: pass},
		})
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		return s
	}
	content, err := mail.OTPEmail(mail.Input{AppName: "Acme", AppURL: "https://acme.test", Collection: "users", Token: "link-token-abc", Code: "042917", Expires: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if err := sender("pw-123").Send(ctx, content.To("Ada <ada@example.test>")); err != nil {
		t.Fatalf("Send: %v", err)
	}

	var got []apitest.Email
	deadline := time.Now().Add(10 * time.Second)
	for got = md.Emails(t); len(got) == 0; got = md.Emails(t) {
		if time.Now().After(deadline) {
			t.Fatal("maildev has no message after 10 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(got) != 1 {
		t.Fatalf("maildev has %d messages, want 1", len(got))
	}
	m := got[0]
	if m.Subject != "Your Acme sign-in code" {
		t.Errorf("subject %q", m.Subject)
	}
	if len(m.From) != 1 || m.From[0].Address != "no-reply@acme.test" || m.From[0].Name != "Acme" {
		t.Errorf("from %+v", m.From)
	}
	if len(m.To) != 1 || m.To[0].Address != "ada@example.test" {
		t.Errorf("to %+v", m.To)
	}
	if h, _ := m.Headers["auto-submitted"].(string); h != "auto-generated" {
		t.Errorf("auto-submitted header %v", m.Headers["auto-submitted"])
	}
	for name, part := range map[string]string{"text": m.Text, "html": m.HTML} {
		if !strings.Contains(part, "042917") {
			t.Errorf("%s part lacks the code:\n%s", name, part)
		}
		if !strings.Contains(part, "token=link-token-abc") {
			t.Errorf("%s part lacks the link token:\n%s", name, part)
		}
	}
	if err := sender("nope").Send(ctx, content.To("ada@example.test")); err == nil {
		t.Error("maildev accepted a wrong password")
	}
}
