// Package mail owns outbound email: the transport configuration read from
// the mail.* and smtp.* settings, a Sender that delivers one message over
// SMTP (github.com/wneessen/go-mail) or an HTTP mail API, and the templates
// of the messages the auth endpoints send (email verification, password
// reset, email OTP).
//
// The package is a leaf: it knows nothing of the engine, of HTTP handlers or
// of Raft. It does not import net/http either (the engine's layering forbids
// it, see deps_test.go): the HTTP transport posts through a PostFunc that
// the caller supplies, which is where the caller's SSRF-guarded client
// goes in. The SMTP transport accepts a Dial function for the same reason.
//
// # SMTP security (smtp.secure)
//
//   - "0", "false", "starttls" or empty (the default): connect in plain text
//     and upgrade with STARTTLS, which is required; a server that does not
//     offer it is refused, so a man in the middle cannot strip the upgrade.
//     Port 587 unless set.
//   - "1", "true", "tls", "ssl": implicit TLS from the first byte (SMTPS).
//     Port 465 unless set. The engine's settings default smtp.port to 587,
//     so with this mode set smtp.port=465 too (FromSettings cannot tell a
//     default 587 from a chosen one).
//   - "none": plain text, no TLS at all, and credentials (if any) are sent
//     with AUTH PLAIN in the clear. Only for a relay on the same host or a
//     private network, and for mail catchers in development.
//
// Certificates are verified against the system roots and the host name;
// there is no setting to skip verification.
//
// # HTTP transport (mail.transport = http)
//
// One request per message:
//
//	POST <mail.http.url>
//	Content-Type: application/json
//	Authorization: Bearer <mail.http.api_key>   (only when the key is set)
//
//	{"from": "...", "to": "...", "subject": "...", "text": "...", "html": "..."}
//
// "from" is mail.from (else smtp.from) as written in the settings, for
// example "Acme <no-reply@acme.test>"; "to" is one address. Any 2xx status
// is success; anything else is an error that carries the status and the
// first bytes of the response body. An adapter to a provider with another
// format is a small relay outside svcd.
//
// # Templates
//
// VerificationEmail, PasswordResetEmail and OTPEmail render subject, plain
// text and HTML (html/template) from an Input; they are pure functions.
// Links point at pages of the application's site under app.url
// (PathVerifyEmail, PathResetPassword, PathOTP) with ?collection=&token=.
// The OTP code is in the body, never in the subject, so it does not show
// on a locked phone's notification.
package mail

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/mail"
	"strings"
)

// Transport names the way messages leave the server (setting mail.transport).
type Transport string

// The transports.
const (
	TransportSMTP Transport = "smtp"
	TransportHTTP Transport = "http"
)

// Errors of configuration and sending.
var (
	// ErrNotConfigured means outbound mail is off: smtp.enabled is not set
	// for the SMTP transport, or mail.http.url is empty for the HTTP one.
	// Features that need mail (verification, reset, email OTP) are
	// unavailable.
	ErrNotConfigured = errors.New("mail: outbound mail is not configured")
	// ErrInvalidConfig wraps every configuration problem New reports.
	ErrInvalidConfig = errors.New("mail: invalid configuration")
	// ErrInvalidMessage wraps problems with a Message (bad recipient, empty
	// subject or body).
	ErrInvalidMessage = errors.New("mail: invalid message")
)

// Config is the outbound mail configuration: the values of the mail.* and
// smtp.* settings (see FromSettings) plus the hooks only code can provide.
type Config struct {
	Transport Transport
	// From is the sender, an address or "Name <address>".
	From string
	SMTP SMTPConfig
	HTTP HTTPConfig
}

// Message is one email to one recipient. Text is required; HTML is
// optional and sent as the alternative part.
type Message struct {
	To      string
	Subject string
	Text    string
	HTML    string
}

// Sender delivers messages through the configured transport. It is safe
// for concurrent use; each Send opens its own connection or request.
type Sender struct {
	cfg  Config
	from *mail.Address
}

// New checks cfg and returns a Sender for it.
func New(cfg Config) (*Sender, error) {
	if cfg.From == "" {
		return nil, fmt.Errorf("%w: no sender address (mail.from or smtp.from)", ErrInvalidConfig)
	}
	from, err := mail.ParseAddress(cfg.From)
	if err != nil {
		return nil, fmt.Errorf("%w: sender %q: %v", ErrInvalidConfig, cfg.From, err)
	}
	switch cfg.Transport {
	case TransportSMTP:
		err = cfg.SMTP.check()
	case TransportHTTP:
		err = cfg.HTTP.check()
	default:
		err = fmt.Errorf("%w: unknown transport %q (want smtp or http)", ErrInvalidConfig, cfg.Transport)
	}
	if err != nil {
		return nil, err
	}
	return &Sender{cfg: cfg, from: from}, nil
}

// Send delivers m. The context bounds the whole delivery.
func (s *Sender) Send(ctx context.Context, m Message) error {
	to, err := m.check()
	if err != nil {
		return err
	}
	if s.cfg.Transport == TransportHTTP {
		return s.sendHTTP(ctx, to, m)
	}
	return s.sendSMTP(ctx, to, m)
}

// check validates m and returns the parsed recipient.
func (m Message) check() (*mail.Address, error) {
	addr, err := mail.ParseAddress(m.To)
	if err != nil {
		return nil, fmt.Errorf("%w: recipient %q: %v", ErrInvalidMessage, m.To, err)
	}
	if strings.TrimSpace(m.Subject) == "" {
		return nil, fmt.Errorf("%w: empty subject", ErrInvalidMessage)
	}
	if strings.ContainsAny(m.Subject, "\r\n") {
		return nil, fmt.Errorf("%w: line break in subject", ErrInvalidMessage)
	}
	if m.Text == "" {
		return nil, fmt.Errorf("%w: empty text body", ErrInvalidMessage)
	}
	return addr, nil
}

// DialFunc opens a network connection, as net.Dialer.DialContext does.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)
