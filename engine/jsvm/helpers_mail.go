package jsvm

import (
	"bytes"
	"errors"
	htmltemplate "html/template"
	"io"
	"text/template"

	"github.com/dop251/goja"

	"svcd/engine/mail"
)

// helpers.email and helpers.mails.send deliver a message through the
// node's outbound mail (the mail.* and smtp.* settings, as the auth
// emails); helpers.template renders Go templates.

// maxTemplateOutput bounds one rendered template.
const maxTemplateOutput = 1 << 20

func (h *helperSet) mail(o *goja.Object) {
	set(o, "email", h.sendMail("helpers.email"))
	ns := h.namespace(o, "mails")
	ns.set("send", h.sendMail("helpers.mails.send"))
	tpl := h.namespace(o, "template")
	tpl.set("render", h.render)
}

// sendMail is a helper taking {to, subject, text, html}: to is one
// address or an array of them, each sent its own message. It answers
// {sent: n}.
func (h *helperSet) sendMail(name string) func(goja.FunctionCall) goja.Value {
	return func(call goja.FunctionCall) goja.Value {
		msg, err := h.inv.b.toObject(call.Argument(0), "the message")
		if err != nil || msg == nil {
			h.inv.fail("%s: the message must be an object {to, subject, text, html}", name)
		}
		var to []string
		switch t := msg["to"].(type) {
		case string:
			to = []string{t}
		case []any:
			for _, v := range t {
				if s, ok := v.(string); ok {
					to = append(to, s)
				}
			}
		}
		if len(to) == 0 {
			h.inv.fail("%s: to must name an address or an array of addresses", name)
		}
		s, err := h.mailer()
		if err != nil {
			h.inv.throw(name, err)
		}
		for _, addr := range to {
			m := mail.Message{To: addr, Subject: optString(msg, "subject"), Text: optString(msg, "text"), HTML: optString(msg, "html")}
			if err := s.Send(h.inv.ctx, m); err != nil {
				h.inv.throw(name, err)
			}
		}
		return h.inv.b.fromGo(map[string]any{"sent": len(to)})
	}
}

// errMailOff is mail that is not configured.
var errMailOff = errors.New("email delivery is not configured (set smtp.enabled=1 and smtp.*, or mail.transport=http and mail.http.url)")

// mailer is a sender for the current settings.
func (h *helperSet) mailer() (*mail.Sender, error) {
	cfg, err := mail.FromSettings(h.inv.m.core.Setting)
	if errors.Is(err, mail.ErrNotConfigured) {
		return nil, errMailOff
	}
	if err != nil {
		return nil, err
	}
	if cfg.Transport == mail.TransportHTTP {
		if h.inv.m.out == nil {
			return nil, errMailOff
		}
		cfg.HTTP.Post = h.inv.m.out.Post
	}
	return mail.New(cfg)
}

// render(source, data, {html}) renders a Go template (text/template;
// html/template, which escapes for HTML, with html: true): "Hello
// {{.name}}". The output is at most 1 MiB.
func (h *helperSet) render(call goja.FunctionCall) goja.Value {
	src := h.str(call, 0, "helpers.template.render", "the template")
	data, err := h.inv.b.toGo(call.Argument(1))
	if err != nil {
		h.inv.throw("helpers.template.render", err)
	}
	o := h.opts(call, 2, "helpers.template.render")
	out := &capped{max: maxTemplateOutput}
	if optBool(o, "html", false) {
		t, err := htmltemplate.New("t").Option("missingkey=zero").Parse(src)
		if err == nil {
			err = t.Execute(out, data)
		}
		if err != nil {
			h.inv.throw("helpers.template.render", err)
		}
	} else {
		t, err := template.New("t").Option("missingkey=zero").Parse(src)
		if err == nil {
			err = t.Execute(out, data)
		}
		if err != nil {
			h.inv.throw("helpers.template.render", err)
		}
	}
	h.inv.charge("helpers.template.render", out.Len())
	return h.inv.rt.ToValue(out.String())
}

// capped is a buffer that refuses to grow past max.
type capped struct {
	bytes.Buffer
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	if c.Len()+len(p) > c.max {
		return 0, errors.New("the output is larger than 1 MiB")
	}
	return c.Buffer.Write(p)
}

var _ io.Writer = (*capped)(nil)
