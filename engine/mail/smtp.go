package mail

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"net"
	netmail "net/mail"
	"strconv"
	"strings"
	"time"

	gomail "github.com/wneessen/go-mail"
)

// Security is how an SMTP connection is protected (setting smtp.secure;
// see the package documentation and ParseSecurity).
type Security int

// The SMTP security modes.
const (
	// SecurityStartTLS connects in plain text and requires STARTTLS.
	SecurityStartTLS Security = iota
	// SecurityTLS speaks TLS from the first byte (implicit TLS, SMTPS).
	SecurityTLS
	// SecurityNone never uses TLS and may send credentials in the clear.
	SecurityNone
)

// String returns the canonical setting value of s.
func (s Security) String() string {
	switch s {
	case SecurityStartTLS:
		return "starttls"
	case SecurityTLS:
		return "tls"
	case SecurityNone:
		return "none"
	}
	return "Security(" + strconv.Itoa(int(s)) + ")"
}

// ParseSecurity reads a smtp.secure value: "", "0", "false", "starttls"
// give SecurityStartTLS; "1", "true", "tls", "ssl" give SecurityTLS;
// "none" gives SecurityNone. Case and surrounding space are ignored.
func ParseSecurity(v string) (Security, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "0", "false", "off", "starttls":
		return SecurityStartTLS, nil
	case "1", "true", "on", "tls", "ssl":
		return SecurityTLS, nil
	case "none":
		return SecurityNone, nil
	}
	return 0, fmt.Errorf("%w: smtp.secure %q (want starttls, tls or none)", ErrInvalidConfig, v)
}

// DefaultTimeout bounds one SMTP delivery when SMTPConfig.Timeout is zero.
const DefaultTimeout = 30 * time.Second

// SMTPConfig is the SMTP transport: settings smtp.host, .port, .secure,
// .user, .pass.
type SMTPConfig struct {
	Host string
	// Port defaults to 587, or 465 with SecurityTLS.
	Port     int
	Security Security
	// User and Pass, when User is set, authenticate with AUTH PLAIN (or
	// LOGIN when the server offers only that).
	User string
	Pass string
	// Timeout bounds connecting and each command; DefaultTimeout if zero.
	Timeout time.Duration
	// TLSConfig, if set, is cloned for the TLS handshake (tests set
	// RootCAs). ServerName defaults to Host; the minimum version is TLS 1.2.
	TLSConfig *tls.Config
	// Dial, if set, opens the TCP connection (an egress guard, a proxy).
	// Implicit TLS is layered on top of it by the Sender.
	Dial DialFunc
}

func (c SMTPConfig) check() error {
	if strings.TrimSpace(c.Host) == "" {
		return fmt.Errorf("%w: smtp.host is empty", ErrInvalidConfig)
	}
	if c.Port < 0 || c.Port > 65535 {
		return fmt.Errorf("%w: smtp.port %d out of range", ErrInvalidConfig, c.Port)
	}
	switch c.Security {
	case SecurityStartTLS, SecurityTLS, SecurityNone:
	default:
		return fmt.Errorf("%w: unknown SMTP security %d", ErrInvalidConfig, c.Security)
	}
	if c.User == "" && c.Pass != "" {
		return fmt.Errorf("%w: smtp.pass set without smtp.user", ErrInvalidConfig)
	}
	return nil
}

func (c SMTPConfig) port() int {
	switch {
	case c.Port != 0:
		return c.Port
	case c.Security == SecurityTLS:
		return 465
	}
	return 587
}

func (c SMTPConfig) tlsConfig() *tls.Config {
	var t *tls.Config
	if c.TLSConfig != nil {
		t = c.TLSConfig.Clone()
	} else {
		t = &tls.Config{}
	}
	if t.ServerName == "" {
		t.ServerName = c.Host
	}
	if t.MinVersion < tls.VersionTLS12 {
		t.MinVersion = tls.VersionTLS12
	}
	return t
}

// dialer returns the function that opens the connection: the configured
// Dial or a net.Dialer, wrapped in TLS for implicit TLS. go-mail does not
// wrap a custom dial function itself, so the Sender always does it.
func (c SMTPConfig) dialer() gomail.DialContextFunc {
	dial := c.Dial
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	if c.Security != SecurityTLS {
		return gomail.DialContextFunc(dial)
	}
	conf := c.tlsConfig()
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		tc := tls.Client(conn, conf)
		if err := tc.HandshakeContext(ctx); err != nil {
			_ = conn.Close()
			return nil, fmt.Errorf("tls handshake: %w", err)
		}
		return tc, nil
	}
}

// clientOptions translates the configuration into go-mail options.
func (c SMTPConfig) clientOptions() []gomail.Option {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	opts := []gomail.Option{
		gomail.WithPort(c.port()),
		gomail.WithTimeout(timeout),
		gomail.WithDialContextFunc(c.dialer()),
	}
	switch c.Security {
	case SecurityTLS:
		// The dial function already speaks TLS; WithSSL stops go-mail from
		// attempting STARTTLS on top of it.
		opts = append(opts, gomail.WithSSL(), gomail.WithTLSPolicy(gomail.NoTLS))
	case SecurityStartTLS:
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory), gomail.WithTLSConfig(c.tlsConfig()))
	case SecurityNone:
		opts = append(opts, gomail.WithTLSPolicy(gomail.NoTLS))
	}
	if c.User == "" {
		return append(opts, gomail.WithSMTPAuth(gomail.SMTPAuthNoAuth))
	}
	// The mechanism is chosen from what the server offers. On a TLS
	// connection go-mail's PLAIN and LOGIN refuse to run without TLS (except
	// to a localhost name); with SecurityNone the -NOENC variants are the
	// explicit opt-in to sending the password in the clear.
	mechs := []gomail.SMTPAuthType{gomail.SMTPAuthPlain, gomail.SMTPAuthLogin}
	if c.Security == SecurityNone {
		mechs = []gomail.SMTPAuthType{gomail.SMTPAuthPlainNoEnc, gomail.SMTPAuthLoginNoEnc}
	}
	return append(opts,
		gomail.WithOpportunisticSMTPAuth(mechs...),
		gomail.WithUsername(c.User),
		gomail.WithPassword(c.Pass),
	)
}

func (s *Sender) sendSMTP(ctx context.Context, to *netmail.Address, m Message) error {
	msg := gomail.NewMsg(gomail.WithNoDefaultUserAgent())
	msg.FromMailAddress(s.from)
	msg.ToMailAddress(to)
	msg.Subject(m.Subject)
	msg.SetDate()
	msg.SetMessageIDWithValue(messageID(s.from.Address))
	// RFC 3834: keeps vacation responders from answering a machine.
	msg.SetGenHeader(gomail.Header("Auto-Submitted"), "auto-generated")
	msg.SetBodyString(gomail.TypeTextPlain, m.Text)
	if m.HTML != "" {
		msg.AddAlternativeString(gomail.TypeTextHTML, m.HTML)
	}
	client, err := gomail.NewClient(s.cfg.SMTP.Host, s.cfg.SMTP.clientOptions()...)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidConfig, err)
	}
	if err := client.DialAndSendWithContext(ctx, msg); err != nil {
		return fmt.Errorf("smtp send to %s:%d: %w", s.cfg.SMTP.Host, s.cfg.SMTP.port(), err)
	}
	return nil
}

// messageID is a random Message-ID under the sender's domain, so the
// header names the mail domain rather than the server's host name.
func messageID(from string) string {
	domain := "localhost"
	if i := strings.LastIndexByte(from, '@'); i >= 0 && i < len(from)-1 {
		domain = from[i+1:]
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:]) + "@" + domain
}
