package mail

import (
	"fmt"
	"strconv"
	"strings"
)

// The settings keys FromSettings reads. mail.http.url is svcd's own key
// (SPEC.md names only the key and sender of the HTTP transport).
const (
	KeyTransport  = "mail.transport"    // smtp (default) or http
	KeyFrom       = "mail.from"         // sender; falls back to smtp.from
	KeyHTTPURL    = "mail.http.url"     // endpoint of the HTTP transport
	KeyHTTPAPIKey = "mail.http.api_key" // bearer token of the HTTP transport
	KeySMTPEnable = "smtp.enabled"      // 1 turns the SMTP transport on
	KeySMTPHost   = "smtp.host"
	KeySMTPPort   = "smtp.port"   // default 587; set 465 with smtp.secure=tls
	KeySMTPSecure = "smtp.secure" // starttls (default), tls or none; see ParseSecurity
	KeySMTPUser   = "smtp.user"
	KeySMTPPass   = "smtp.pass"
	KeySMTPFrom   = "smtp.from"
)

// FromSettings builds a Config from runtime settings; get returns a
// setting's value or default ("" when unset). The hooks that settings
// cannot hold (HTTPConfig.Post, SMTPConfig.Dial, TLSConfig) are left for
// the caller to fill in before New.
//
// It returns ErrNotConfigured when outbound mail is off: the smtp
// transport without smtp.enabled=1, or the http transport without
// mail.http.url. Malformed values give an error wrapping
// ErrInvalidConfig. It does not validate what New validates.
func FromSettings(get func(key string) string) (Config, error) {
	val := func(k string) string { return strings.TrimSpace(get(k)) }
	cfg := Config{From: val(KeyFrom)}
	if cfg.From == "" {
		cfg.From = val(KeySMTPFrom)
	}
	switch t := strings.ToLower(val(KeyTransport)); t {
	case "", "smtp":
		cfg.Transport = TransportSMTP
	case "http":
		cfg.Transport = TransportHTTP
	default:
		return Config{}, fmt.Errorf("%w: %s %q (want smtp or http)", ErrInvalidConfig, KeyTransport, t)
	}
	if cfg.Transport == TransportHTTP {
		cfg.HTTP = HTTPConfig{URL: val(KeyHTTPURL), APIKey: get(KeyHTTPAPIKey)}
		if cfg.HTTP.URL == "" {
			return cfg, ErrNotConfigured
		}
		return cfg, nil
	}
	if !truthy(val(KeySMTPEnable)) {
		return cfg, ErrNotConfigured
	}
	sec, err := ParseSecurity(val(KeySMTPSecure))
	if err != nil {
		return Config{}, err
	}
	cfg.SMTP = SMTPConfig{
		Host:     val(KeySMTPHost),
		Security: sec,
		User:     val(KeySMTPUser),
		Pass:     get(KeySMTPPass),
	}
	if p := val(KeySMTPPort); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return Config{}, fmt.Errorf("%w: %s %q is not a port", ErrInvalidConfig, KeySMTPPort, p)
		}
		cfg.SMTP.Port = n
	}
	return cfg, nil
}

func truthy(v string) bool {
	switch strings.ToLower(v) {
	case "1", "true", "on", "yes":
		return true
	}
	return false
}
