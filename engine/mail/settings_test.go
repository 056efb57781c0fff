package mail_test

import (
	"errors"
	"testing"

	"svcd/engine/mail"
)

func TestFromSettings(t *testing.T) {
	get := func(m map[string]string) func(string) string {
		return func(k string) string { return m[k] }
	}
	// Defaults of the engine: smtp transport, smtp.enabled 0.
	if _, err := mail.FromSettings(get(map[string]string{"mail.transport": "smtp", "smtp.port": "587"})); !errors.Is(err, mail.ErrNotConfigured) {
		t.Errorf("defaults: %v, want ErrNotConfigured", err)
	}
	if _, err := mail.FromSettings(get(map[string]string{"mail.transport": "http"})); !errors.Is(err, mail.ErrNotConfigured) {
		t.Errorf("http without url: %v, want ErrNotConfigured", err)
	}
	cfg, err := mail.FromSettings(get(map[string]string{
		"smtp.enabled": "1", "smtp.host": " mx.acme.test ", "smtp.port": "465", "smtp.secure": "TLS",
		"smtp.user": "u", "smtp.pass": " p ", "smtp.from": "no-reply@acme.test",
	}))
	if err != nil {
		t.Fatal(err)
	}
	sc := cfg.SMTP
	if cfg.Transport != mail.TransportSMTP || cfg.From != "no-reply@acme.test" ||
		sc.Host != "mx.acme.test" || sc.Port != 465 || sc.Security != mail.SecurityTLS || sc.User != "u" || sc.Pass != " p " {
		t.Errorf("smtp config %+v", cfg)
	}
	cfg, err = mail.FromSettings(get(map[string]string{
		"mail.transport": "http", "mail.http.url": "https://relay.test/send", "mail.http.api_key": "k",
		"mail.from": "a@acme.test", "smtp.from": "b@acme.test",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Transport != mail.TransportHTTP || cfg.From != "a@acme.test" || cfg.HTTP.URL != "https://relay.test/send" || cfg.HTTP.APIKey != "k" {
		t.Errorf("http config %+v", cfg)
	}
	for _, bad := range []map[string]string{
		{"mail.transport": "carrier-pigeon"},
		{"smtp.enabled": "1", "smtp.secure": "maybe"},
		{"smtp.enabled": "1", "smtp.port": "smtp"},
		{"smtp.enabled": "1", "smtp.port": "0"},
	} {
		if _, err := mail.FromSettings(get(bad)); !errors.Is(err, mail.ErrInvalidConfig) {
			t.Errorf("%v: %v, want ErrInvalidConfig", bad, err)
		}
	}
}

func TestParseSecurity(t *testing.T) {
	for in, want := range map[string]mail.Security{
		"": mail.SecurityStartTLS, "0": mail.SecurityStartTLS, "false": mail.SecurityStartTLS, "starttls": mail.SecurityStartTLS,
		"1": mail.SecurityTLS, "true": mail.SecurityTLS, " TLS ": mail.SecurityTLS, "ssl": mail.SecurityTLS,
		"none": mail.SecurityNone,
	} {
		got, err := mail.ParseSecurity(in)
		if err != nil || got != want {
			t.Errorf("ParseSecurity(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := mail.ParseSecurity("plain"); err == nil {
		t.Error(`ParseSecurity("plain") succeeded`)
	}
}
