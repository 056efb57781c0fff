package mail_test

import (
	"strings"
	"testing"
	"time"

	"svcd/engine/mail"
)

func TestTemplates(t *testing.T) {
	in := mail.Input{AppName: "Acme", AppURL: "https://acme.test/app/", Collection: "users", Token: "tok-123", Code: "123456", Expires: time.Hour}
	for _, tc := range []struct {
		name    string
		render  func(mail.Input) (mail.Content, error)
		subject string
		link    string
		text    []string // also in the HTML
	}{
		{"verify", mail.VerificationEmail, "Verify your email for Acme",
			"https://acme.test/app/auth/verify-email?collection=users&token=tok-123", []string{"valid for 1 hour"}},
		{"reset", mail.PasswordResetEmail, "Reset your Acme password",
			"https://acme.test/app/auth/reset-password?collection=users&token=tok-123", []string{"tok-123", "valid for 1 hour"}},
		{"email change", mail.EmailChangeEmail, "Confirm your new Acme email address",
			"https://acme.test/app/auth/confirm-email-change?collection=users&token=tok-123", []string{"tok-123", "valid for 1 hour"}},
		{"otp", mail.OTPEmail, "Your Acme sign-in code",
			"https://acme.test/app/auth/otp?collection=users&token=tok-123", []string{"123456", "valid for 1 hour"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := tc.render(in)
			if err != nil {
				t.Fatal(err)
			}
			if c.Subject != tc.subject {
				t.Errorf("subject %q, want %q", c.Subject, tc.subject)
			}
			if !strings.Contains(c.Text, "\n"+tc.link+"\n") {
				t.Errorf("text lacks link %s:\n%s", tc.link, c.Text)
			}
			if !strings.Contains(c.HTML, `href="`+strings.ReplaceAll(tc.link, "&", "&amp;")+`"`) {
				t.Errorf("html lacks link %s:\n%s", tc.link, c.HTML)
			}
			for _, s := range tc.text {
				if !strings.Contains(c.Text, s) || !strings.Contains(c.HTML, s) {
					t.Errorf("text or html lacks %q:\n%s\n%s", s, c.Text, c.HTML)
				}
			}
			if strings.Contains(c.Subject, "123456") {
				t.Error("the code is in the subject (shown on lock screens)")
			}
			// Pure: the same input renders the same output.
			again, _ := tc.render(in)
			if again != c {
				t.Error("two renderings of one input differ")
			}
			m := c.To("ada@example.test")
			if m.To != "ada@example.test" || m.Subject != c.Subject || m.Text != c.Text || m.HTML != c.HTML {
				t.Errorf("To: %+v", m)
			}
		})
	}
}

func TestTemplatesEscapeAndDefaults(t *testing.T) {
	c, err := mail.VerificationEmail(mail.Input{AppName: `<script>alert(1)</script> & Co`, AppURL: "https://acme.test", Token: `a"b<c>`})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(c.HTML, "<script>") || !strings.Contains(c.HTML, "&lt;script&gt;") {
		t.Errorf("app name not escaped in html:\n%s", c.HTML)
	}
	if !strings.Contains(c.Text, "token=a%22b%3Cc%3E") {
		t.Errorf("token not query-escaped in the link:\n%s", c.Text)
	}
	if strings.Contains(c.Text, "valid for") {
		t.Errorf("no Expires, yet a validity line:\n%s", c.Text)
	}

	// Without app.url: no link, the token itself, the default app name.
	c, err = mail.VerificationEmail(mail.Input{Token: "tok-9"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(c.Text, "http") || strings.Contains(c.HTML, "href") || !strings.Contains(c.Text, "tok-9") || !strings.Contains(c.HTML, "tok-9") {
		t.Errorf("without app.url:\n%s\n%s", c.Text, c.HTML)
	}
	if c.Subject != "Verify your email for svc" {
		t.Errorf("subject %q", c.Subject)
	}
}

func TestTemplatesReject(t *testing.T) {
	for name, f := range map[string]func() (mail.Content, error){
		"verify no token":  func() (mail.Content, error) { return mail.VerificationEmail(mail.Input{}) },
		"reset no token":   func() (mail.Content, error) { return mail.PasswordResetEmail(mail.Input{}) },
		"change no token":  func() (mail.Content, error) { return mail.EmailChangeEmail(mail.Input{}) },
		"otp no token":     func() (mail.Content, error) { return mail.OTPEmail(mail.Input{Code: "123456"}) },
		"otp short code":   func() (mail.Content, error) { return mail.OTPEmail(mail.Input{Code: "12345", Token: "t"}) },
		"otp letter code":  func() (mail.Content, error) { return mail.OTPEmail(mail.Input{Code: "12345a", Token: "t"}) },
		"relative app.url": func() (mail.Content, error) { return mail.VerificationEmail(mail.Input{AppURL: "/app", Token: "t"}) },
		"js app.url": func() (mail.Content, error) {
			return mail.VerificationEmail(mail.Input{AppURL: "javascript:alert(1)", Token: "t"})
		},
		"newline app name": func() (mail.Content, error) {
			return mail.VerificationEmail(mail.Input{AppName: "a\r\nBcc: x", Token: "t"})
		},
	} {
		if _, err := f(); err == nil {
			t.Errorf("%s: rendered", name)
		}
	}
}

func TestExpiresWording(t *testing.T) {
	for d, want := range map[time.Duration]string{
		10 * time.Minute:   "valid for 10 minutes",
		time.Minute:        "valid for 1 minute",
		90 * time.Second:   "valid for 2 minutes",
		90 * time.Minute:   "valid for 90 minutes",
		2 * time.Hour:      "valid for 2 hours",
		24 * time.Hour:     "valid for 1 day",
		36 * time.Hour:     "valid for 36 hours",
		7 * 24 * time.Hour: "valid for 7 days",
	} {
		c, err := mail.PasswordResetEmail(mail.Input{Token: "t", Expires: d})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(c.Text, want) {
			t.Errorf("%v: text lacks %q:\n%s", d, want, c.Text)
		}
	}
}
