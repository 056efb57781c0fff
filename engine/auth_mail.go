package engine

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"time"

	"svcd/engine/mail"
)

// Mail for the auth flows. A request that sends mail (password reset,
// email verification, email OTP) answers before anything depends on the
// account: the node checks that mail is configured, answers, and only then
// looks the address up, proposes what must be stored and sends, in the
// background. The answer and its timing are the same whether or not the
// account exists.

var (
	errMailOff = &Error{Kind: KindValidation,
		Message: "Email delivery is not configured (set smtp.enabled=1 and smtp.*, or mail.transport=http and mail.http.url)"}
	errMailBroken = &Error{Kind: KindValidation, Message: "Email delivery is misconfigured; see the server log"}
)

// mailSlots bounds the background deliveries in flight on one node; a
// request beyond it is dropped (and logged) rather than queued, so a burst
// of requests cannot pile up goroutines.
const mailSlots = 16

// mailDeadline bounds one background delivery (look-up, proposal, send).
const mailDeadline = time.Minute

// mailer returns a Sender for the current settings, or the 422 that says
// mail is off or broken.
func (e *Engine) mailer() (*mail.Sender, error) {
	cfg, err := mail.FromSettings(e.Setting)
	if errors.Is(err, mail.ErrNotConfigured) {
		return nil, errMailOff
	}
	if err != nil {
		e.log.Warn("mail settings", "err", err)
		return nil, errMailBroken
	}
	if cfg.Transport == mail.TransportHTTP {
		if e.outbound == nil {
			return nil, errMailOff
		}
		cfg.HTTP.Post = e.outbound.Post
	}
	s, err := mail.New(cfg)
	if err != nil {
		e.log.Warn("mail settings", "err", err)
		return nil, errMailBroken
	}
	return s, nil
}

// appName names the application in messages and in authenticator apps:
// the host of app.url, else "svc".
func (e *Engine) appName() string {
	if u, err := url.Parse(strings.TrimSpace(e.Setting("app.url"))); err == nil && u.Hostname() != "" {
		return u.Hostname()
	}
	return "svc"
}

// mailInput is the template input for collection ci; links point under
// app.url when it is a valid URL, else the message carries the token only.
func (e *Engine) mailInput(ci *Coll, token, code string, ttl time.Duration) mail.Input {
	in := mail.Input{AppName: e.appName(), Collection: ci.Name, Token: token, Code: code, Expires: ttl}
	if base := strings.TrimSpace(e.Setting("app.url")); base != "" {
		if _, err := mail.Link(base, "/", "", "x"); err == nil {
			in.AppURL = base
		} else {
			e.log.Warn("app.url is not an absolute URL; auth emails carry no link", "app.url", base)
		}
	}
	return in
}

// later runs fn in the background with its own deadline, after the
// request that asked for it has been answered; failures go to the log.
func (e *Engine) later(what string, fn func(ctx context.Context) error) {
	select {
	case e.mailSlots <- struct{}{}:
	default:
		e.log.Warn("auth mail dropped: too many deliveries in flight", "what", what)
		return
	}
	go func() {
		defer func() { <-e.mailSlots }()
		ctx, cancel := context.WithTimeout(context.Background(), mailDeadline)
		defer cancel()
		if err := fn(ctx); err != nil {
			e.log.Warn("auth mail failed", "what", what, "err", err)
		}
	}()
}

// send renders nothing itself: it delivers c to addr with s.
func send(ctx context.Context, s *mail.Sender, c mail.Content, addr string) error {
	return s.Send(ctx, c.To(addr))
}

// mailRequest checks what every "send me a mail" request checks before
// answering: the auth collection, the feature (when named), the address
// and the mail configuration. It returns the collection, the normalized
// address and the sender.
func (e *Engine) mailRequest(name, email, feature, what string) (*Coll, string, *mail.Sender, error) {
	ci, err := e.authCollection(name)
	if err != nil {
		return nil, "", nil, err
	}
	if feature != "" && !e.authFeature(ci, feature) {
		return nil, "", nil, errFeatureOff(what)
	}
	addr, msg := normalizeEmail(email)
	if msg != "" {
		return nil, "", nil, FieldError("email", msg)
	}
	sender, err := e.mailer()
	if err != nil {
		return nil, "", nil, err
	}
	return ci, addr, sender, nil
}
