package auth

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"time"

	"svcd/engine"
	"svcd/engine/mail"
)

// Mail for the auth flows. A request that sends mail (password reset,
// email verification, email OTP) answers before anything depends on the
// account: the node checks that mail is configured, answers, and only then
// looks the address up, proposes what must be stored and sends, in the
// background. The answer and its timing are the same whether or not the
// account exists.

var (
	errMailOff = &engine.Error{Kind: engine.KindValidation,
		Message: "Email delivery is not configured (set smtp.enabled=1 and smtp.*, or mail.transport=http and mail.http.url)"}
	errMailBroken = &engine.Error{Kind: engine.KindValidation, Message: "Email delivery is misconfigured; see the server log"}
)

// mailSlots bounds the background deliveries in flight on one node; a
// request beyond it is dropped (and logged) rather than queued, so a burst
// of requests cannot pile up goroutines.
const mailSlots = 16

// mailDeadline bounds one background delivery (look-up, proposal, send).
const mailDeadline = time.Minute

// mailer returns a Sender for the current settings, or the 422 that says
// mail is off or broken.
func (au *Auth) mailer() (*mail.Sender, error) {
	cfg, err := mail.FromSettings(au.core.Setting)
	if errors.Is(err, mail.ErrNotConfigured) {
		return nil, errMailOff
	}
	if err != nil {
		au.core.Logger().Warn("mail settings", "err", err)
		return nil, errMailBroken
	}
	if cfg.Transport == mail.TransportHTTP {
		if au.outbound == nil {
			return nil, errMailOff
		}
		cfg.HTTP.Post = au.outbound.Post
	}
	s, err := mail.New(cfg)
	if err != nil {
		au.core.Logger().Warn("mail settings", "err", err)
		return nil, errMailBroken
	}
	return s, nil
}

// appName names the application in messages and in authenticator apps:
// the host of app.url, else "svc".
func (au *Auth) appName() string {
	if u, err := url.Parse(strings.TrimSpace(au.core.Setting("app.url"))); err == nil && u.Hostname() != "" {
		return u.Hostname()
	}
	return "svc"
}

// mailInput is the template input for collection ci; links point under
// app.url when it is a valid URL, else the message carries the token only.
func (au *Auth) mailInput(ci *engine.Coll, token, code string, ttl time.Duration) mail.Input {
	in := mail.Input{AppName: au.appName(), Collection: ci.Name, Token: token, Code: code, Expires: ttl}
	if base := strings.TrimSpace(au.core.Setting("app.url")); base != "" {
		if _, err := mail.Link(base, "/", "", "x"); err == nil {
			in.AppURL = base
		} else {
			au.core.Logger().Warn("app.url is not an absolute URL; auth emails carry no link", "app.url", base)
		}
	}
	return in
}

// later runs fn in the background with its own deadline, after the
// request that asked for it has been answered; failures go to the log.
func (au *Auth) later(what string, fn func(ctx context.Context) error) {
	select {
	case au.mailSlots <- struct{}{}:
	default:
		au.core.Logger().Warn("auth mail dropped: too many deliveries in flight", "what", what)
		return
	}
	go func() {
		defer func() { <-au.mailSlots }()
		ctx, cancel := context.WithTimeout(context.Background(), mailDeadline)
		defer cancel()
		if err := fn(ctx); err != nil {
			au.core.Logger().Warn("auth mail failed", "what", what, "err", err)
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
func (au *Auth) mailRequest(name, email, feature, what string) (*engine.Coll, string, *mail.Sender, error) {
	ci, err := au.authCollection(name)
	if err != nil {
		return nil, "", nil, err
	}
	if feature != "" && !au.authFeature(ci, feature) {
		return nil, "", nil, errFeatureOff(what)
	}
	addr, msg := normalizeEmail(email)
	if msg != "" {
		return nil, "", nil, engine.FieldError("email", msg)
	}
	sender, err := au.mailer()
	if err != nil {
		return nil, "", nil, err
	}
	return ci, addr, sender, nil
}
