package mail

import (
	"bytes"
	"errors"
	"fmt"
	htmltemplate "html/template"
	"net/url"
	"strings"
	texttemplate "text/template"
	"time"
)

// Paths under app.url that the links of the messages point at. They are
// pages of the application's own site (svcd has no callback route): the
// page reads the token (and collection) from the query string and calls
// the matching /auth/:collection/... endpoint.
const (
	PathVerifyEmail   = "/auth/verify-email"
	PathResetPassword = "/auth/reset-password"
	PathOTP           = "/auth/otp"
	PathEmailChange   = "/auth/confirm-email-change"
)

// Input is what every template needs. Rendering is a pure function of it.
type Input struct {
	// AppName names the application in subjects and greetings; "svc" if empty.
	AppName string
	// AppURL is the public base URL (setting app.url). When empty the
	// messages carry the token without a link.
	AppURL string
	// Collection, when set, is added to links as ?collection=.
	Collection string
	// Token is the link token (verification, reset, OTP link).
	Token string
	// Code is the 6-digit code of an email OTP.
	Code string
	// Expires, when positive, is how long the token or code stays valid.
	Expires time.Duration
}

// Content is a rendered message without its recipient.
type Content struct {
	Subject string
	Text    string
	HTML    string
}

// To makes c a Message for one recipient.
func (c Content) To(addr string) Message {
	return Message{To: addr, Subject: c.Subject, Text: c.Text, HTML: c.HTML}
}

// VerificationEmail renders the email-verification message: a link that
// carries in.Token.
func VerificationEmail(in Input) (Content, error) {
	if in.Token == "" {
		return Content{}, errors.New("mail: verification email without a token")
	}
	return render(verifyTmpl, in, PathVerifyEmail)
}

// PasswordResetEmail renders the password-reset message: a link that
// carries in.Token, and the token itself for clients without a web page.
func PasswordResetEmail(in Input) (Content, error) {
	if in.Token == "" {
		return Content{}, errors.New("mail: password reset email without a token")
	}
	return render(resetTmpl, in, PathResetPassword)
}

// EmailChangeEmail renders the email-change message sent to the new
// address: a link that carries in.Token, and the token itself (the
// confirmation also asks for the account's password).
func EmailChangeEmail(in Input) (Content, error) {
	if in.Token == "" {
		return Content{}, errors.New("mail: email change email without a token")
	}
	return render(emailChangeTmpl, in, PathEmailChange)
}

// OTPEmail renders the email one-time-password message: the 6-digit
// in.Code to type in, and a sign-in link that carries in.Token.
func OTPEmail(in Input) (Content, error) {
	if len(in.Code) != 6 || strings.Trim(in.Code, "0123456789") != "" {
		return Content{}, fmt.Errorf("mail: OTP email code %q is not 6 digits", in.Code)
	}
	if in.Token == "" {
		return Content{}, errors.New("mail: OTP email without a link token")
	}
	return render(otpTmpl, in, PathOTP)
}

// data is what the templates see.
type data struct {
	App     string
	Link    string
	Token   string
	Code    string
	Expires string
}

type tmpl struct {
	subject *texttemplate.Template
	text    *texttemplate.Template
	html    *htmltemplate.Template
}

func render(t tmpl, in Input, path string) (Content, error) {
	d := data{App: strings.TrimSpace(in.AppName), Token: in.Token, Code: in.Code, Expires: humanDuration(in.Expires)}
	if d.App == "" {
		d.App = "svc"
	}
	if strings.ContainsAny(d.App, "\r\n") {
		return Content{}, errors.New("mail: line break in app name")
	}
	if in.AppURL != "" {
		link, err := Link(in.AppURL, path, in.Collection, in.Token)
		if err != nil {
			return Content{}, err
		}
		d.Link = link
	}
	var c Content
	var b bytes.Buffer
	if err := t.subject.Execute(&b, d); err != nil {
		return Content{}, fmt.Errorf("mail: render subject: %w", err)
	}
	c.Subject = b.String()
	b.Reset()
	if err := t.text.Execute(&b, d); err != nil {
		return Content{}, fmt.Errorf("mail: render text: %w", err)
	}
	c.Text = b.String()
	b.Reset()
	if err := t.html.Execute(&b, d); err != nil {
		return Content{}, fmt.Errorf("mail: render html: %w", err)
	}
	c.HTML = b.String()
	return c, nil
}

// Link joins the base URL (app.url, which may carry a path prefix) with
// path and adds token and, if set, collection as query parameters.
func Link(base, path, collection, token string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(base))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "", fmt.Errorf("mail: app.url %q is not an absolute http(s) URL", base)
	}
	u = u.JoinPath(path)
	q := url.Values{}
	if collection != "" {
		q.Set("collection", collection)
	}
	q.Set("token", token)
	u.RawQuery = q.Encode()
	u.Fragment = ""
	return u.String(), nil
}

// humanDuration says d in whole minutes, hours or days ("10 minutes").
func humanDuration(d time.Duration) string {
	unit := func(n int64, one string) string {
		if n == 1 {
			return "1 " + one
		}
		return fmt.Sprintf("%d %ss", n, one)
	}
	switch {
	case d <= 0:
		return ""
	case d < time.Hour || d%time.Hour != 0:
		return unit(int64((d+time.Minute-1)/time.Minute), "minute")
	case d < 24*time.Hour || d%(24*time.Hour) != 0:
		return unit(int64(d/time.Hour), "hour")
	}
	return unit(int64(d/(24*time.Hour)), "day")
}

func mustTmpl(subject, text, html string) tmpl {
	return tmpl{
		subject: texttemplate.Must(texttemplate.New("subject").Option("missingkey=error").Parse(subject)),
		text:    texttemplate.Must(texttemplate.New("text").Option("missingkey=error").Parse(text)),
		html:    htmltemplate.Must(htmltemplate.New("html").Option("missingkey=error").Parse(htmlLayout + html)),
	}
}

// htmlLayout wraps every HTML body: a plain page, no images, no tracking.
const htmlLayout = `{{define "top"}}<!DOCTYPE html>
<html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"></head>
<body style="font-family: sans-serif; line-height: 1.5; color: #222; max-width: 560px; margin: 0 auto; padding: 16px;">
{{end}}{{define "bottom"}}<p style="color: #666; font-size: 13px;">If you did not ask for this, you can ignore this email.</p>
</body></html>
{{end}}`

var verifyTmpl = mustTmpl(
	`Verify your email for {{.App}}`,
	`Hello,

Please confirm your email address for {{.App}}.
{{if .Link}}
Open this link to verify it:
{{.Link}}
{{else}}
Your verification token:
{{.Token}}
{{end}}{{if .Expires}}
The link is valid for {{.Expires}}.
{{end}}
If you did not ask for this, you can ignore this email.
`,
	`{{template "top" .}}<p>Hello,</p>
<p>Please confirm your email address for {{.App}}.</p>
{{if .Link}}<p><a href="{{.Link}}">Verify my email</a></p>
<p style="font-size: 13px;">Or open this link: {{.Link}}</p>
{{else}}<p>Your verification token:</p>
<p><code>{{.Token}}</code></p>
{{end}}{{if .Expires}}<p>The link is valid for {{.Expires}}.</p>
{{end}}{{template "bottom" .}}`)

var resetTmpl = mustTmpl(
	`Reset your {{.App}} password`,
	`Hello,

Someone asked to reset the password of your {{.App}} account.
{{if .Link}}
Open this link to choose a new password:
{{.Link}}
{{end}}
Your reset token:
{{.Token}}
{{if .Expires}}
It is valid for {{.Expires}}.
{{end}}
If you did not ask for this, you can ignore this email; your password stays the same.
`,
	`{{template "top" .}}<p>Hello,</p>
<p>Someone asked to reset the password of your {{.App}} account.</p>
{{if .Link}}<p><a href="{{.Link}}">Choose a new password</a></p>
<p style="font-size: 13px;">Or open this link: {{.Link}}</p>
{{end}}<p>Your reset token:</p>
<p><code>{{.Token}}</code></p>
{{if .Expires}}<p>It is valid for {{.Expires}}.</p>
{{end}}{{template "bottom" .}}`)

var emailChangeTmpl = mustTmpl(
	`Confirm your new {{.App}} email address`,
	`Hello,

Someone asked to move a {{.App}} account to this email address.
{{if .Link}}
Open this link to confirm the change (you will be asked for the account's password):
{{.Link}}
{{end}}
Your confirmation token:
{{.Token}}
{{if .Expires}}
It is valid for {{.Expires}}.
{{end}}
If you did not ask for this, you can ignore this email; nothing changes.
`,
	`{{template "top" .}}<p>Hello,</p>
<p>Someone asked to move a {{.App}} account to this email address.</p>
{{if .Link}}<p><a href="{{.Link}}">Confirm the change</a> (you will be asked for the account's password)</p>
<p style="font-size: 13px;">Or open this link: {{.Link}}</p>
{{end}}<p>Your confirmation token:</p>
<p><code>{{.Token}}</code></p>
{{if .Expires}}<p>It is valid for {{.Expires}}.</p>
{{end}}{{template "bottom" .}}`)

var otpTmpl = mustTmpl(
	`Your {{.App}} sign-in code`,
	`Hello,

Your sign-in code for {{.App}}:

    {{.Code}}
{{if .Link}}
Or sign in with this link:
{{.Link}}
{{end}}{{if .Expires}}
The code and the link are valid for {{.Expires}}.
{{end}}
If you did not ask for this, you can ignore this email.
`,
	`{{template "top" .}}<p>Hello,</p>
<p>Your sign-in code for {{.App}}:</p>
<p style="font-size: 28px; font-weight: bold; letter-spacing: 4px;"><code>{{.Code}}</code></p>
{{if .Link}}<p>Or <a href="{{.Link}}">sign in with this link</a>.</p>
{{end}}{{if .Expires}}<p>The code and the link are valid for {{.Expires}}.</p>
{{end}}{{template "bottom" .}}`)
