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
// account: the node answers, and only then looks the address up, proposes
// what must be stored and sends, in the background. The answer and its
// timing are the same whether or not the account exists, and whether or
// not mail is configured (without it nothing is sent and a warning is
// logged).

// Why a request sent no mail (mailRequest logs it; the client is told
// nothing).
var (
	errMailOff    = errors.New("email delivery is not configured (set smtp.enabled=1 and smtp.*, or mail.transport=http and mail.http.url)")
	errMailBroken = errors.New("email delivery is misconfigured (the reason was logged as \"mail settings\")")
)

// mailSlots bounds the background deliveries in flight on one node; a
// request beyond it is dropped (and logged) rather than queued, so a burst
// of requests cannot pile up goroutines.
const mailSlots = 16

// mailDeadline bounds one background delivery (look-up, proposal, send).
const mailDeadline = time.Minute

// mailer returns a Sender for the current settings, or the error that
// says mail is off or broken (mailRequest logs it).
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

// mailFlow names a request that sends mail: for the log, and the
// auth_options member it needs (with its name in the 422 when it is off).
type mailFlow struct {
	what    string
	feature string
	label   string
}

// The flows that send mail.
var (
	flowReset  = mailFlow{what: "password reset", feature: "password", label: "Password sign-in"}
	flowVerify = mailFlow{what: "email verification"}
	flowOTP    = mailFlow{what: "email otp", feature: "otp", label: "Email OTP"}
)

// mailRequest checks what every "send me a mail" request checks before
// answering: the auth collection, the feature (when the flow names one)
// and the address. It returns the collection, the normalized address and
// the sender. When mail is not configured (or misconfigured) the sender is
// nil and the error too: the request answers {sent: true} like any other
// (SPEC.md: always; an answer that depended on the configuration would
// still say nothing about the account, but a client cannot tell a
// configuration problem from a refusal), nothing is sent, and the node
// logs a warning for the operator.
func (au *Auth) mailRequest(name, email string, flow mailFlow) (*engine.Coll, string, *mail.Sender, error) {
	ci, err := au.authCollection(name)
	if err != nil {
		return nil, "", nil, err
	}
	if flow.feature != "" && !au.authFeature(ci, flow.feature) {
		return nil, "", nil, errFeatureOff(flow.label)
	}
	addr, msg := normalizeEmail(email)
	if msg != "" {
		return nil, "", nil, engine.FieldError("email", msg)
	}
	sender, err := au.mailer()
	if err != nil {
		au.core.Logger().Warn("auth mail not sent: "+err.Error(), "what", flow.what, "collection", ci.Name)
		return ci, addr, nil, nil
	}
	return ci, addr, sender, nil
}
