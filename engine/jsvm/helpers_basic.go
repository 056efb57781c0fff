package jsvm

import (
	"strings"
	"unicode"

	"github.com/dop251/goja"
	"github.com/google/uuid"
	"golang.org/x/text/unicode/norm"

	"svcd/engine"
)

// abort, uuid, id, slug and log.

func (h *helperSet) basics(o *goja.Object) {
	set(o, "abort", h.abort)
	set(o, "uuid", func(goja.FunctionCall) goja.Value { return h.inv.rt.ToValue(uuid.NewString()) })
	set(o, "id", func(goja.FunctionCall) goja.Value { return h.inv.rt.ToValue(engine.NewID()) })
	set(o, "slug", func(call goja.FunctionCall) goja.Value {
		return h.inv.rt.ToValue(slug(h.str(call, 0, "helpers.slug", "the text")))
	})
	log := h.inv.rt.ToValue(h.logAt("info")).ToObject(h.inv.rt)
	for _, level := range []string{"debug", "info", "warn", "error"} {
		set(log, level, h.logAt(level))
	}
	set(o, "log", log)
}

// abort(message, status) stops the code: a hook's write is refused with
// a 422 carrying message; a route answers it (422, or status when it is
// a 4xx).
func (h *helperSet) abort(call goja.FunctionCall) goja.Value {
	msg := h.optStr(call, 0, "Aborted")
	e := Abort(h.inv.rt, msg)
	if v := call.Argument(1); !goja.IsUndefined(v) && !goja.IsNull(v) {
		if n := v.ToInteger(); n >= 400 && n < 500 {
			set(e, "status", n)
		}
	}
	panic(e)
}

// logAt logs its arguments (strings as they are, other values as JSON)
// at level, naming the code.
func (h *helperSet) logAt(level string) func(goja.FunctionCall) goja.Value {
	return func(call goja.FunctionCall) goja.Value {
		parts := make([]string, 0, len(call.Arguments))
		for _, a := range call.Arguments {
			if s, ok := a.Export().(string); ok {
				parts = append(parts, s)
				continue
			}
			raw, ok, err := h.inv.b.toJSON(a)
			if err != nil || !ok {
				parts = append(parts, a.String())
				continue
			}
			parts = append(parts, string(raw))
		}
		msg := strings.Join(parts, " ")
		attrs := []any{"kind", h.inv.kind, "id", h.inv.id, "text", msg}
		switch level {
		case "debug":
			h.inv.m.log.Debug("js", attrs...)
		case "warn":
			h.inv.m.log.Warn("js", attrs...)
		case "error":
			h.inv.m.log.Error("js", attrs...)
		default:
			h.inv.m.log.Info("js", attrs...)
		}
		return goja.Undefined()
	}
}

// slug is text in lower case ASCII, accents dropped, runs of anything
// else one "-", none at either end: "Héllo, World!" is "hello-world".
func slug(text string) string {
	var b strings.Builder
	dash := false
	for _, r := range norm.NFKD.String(latin.Replace(text)) {
		switch {
		case unicode.Is(unicode.Mn, r):
			continue
		case r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(unicode.ToLower(r))
		default:
			dash = true
		}
	}
	return b.String()
}

// latin spells the Latin letters that have no decomposition in ASCII.
var latin = strings.NewReplacer("ß", "ss", "ẞ", "SS", "æ", "ae", "Æ", "AE", "œ", "oe", "Œ", "OE", "ø", "o", "Ø", "O",
	"đ", "d", "Đ", "D", "ł", "l", "Ł", "L", "þ", "th", "Þ", "TH", "ð", "d", "Ð", "D", "ı", "i")
