package logfile

import (
	"context"
	"log/slog"
)

// Handler writes slog records into d as JSON lines tagged "kind":"app",
// at level and above, stamped with d's clock, with secrets redacted
// (redact.go).
func (d *Dir) Handler(level slog.Leveler) slog.Handler {
	j := slog.NewJSONHandler(d, &slog.HandlerOptions{Level: level, ReplaceAttr: redactAttr})
	return &fileHandler{Handler: j.WithAttrs([]slog.Attr{slog.String("kind", "app")}), d: d}
}

// fileHandler stamps records with the folder's clock (so a line lands in
// the file of the day its time names).
type fileHandler struct {
	slog.Handler
	d *Dir
}

func (h *fileHandler) Handle(ctx context.Context, r slog.Record) error {
	r.Time = h.d.Now()
	return h.Handler.Handle(ctx, r)
}

func (h *fileHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &fileHandler{Handler: h.Handler.WithAttrs(as), d: h.d}
}

func (h *fileHandler) WithGroup(name string) slog.Handler {
	return &fileHandler{Handler: h.Handler.WithGroup(name), d: h.d}
}

// redactAttr replaces secret attributes and scrubs string and error
// values.
func redactAttr(_ []string, a slog.Attr) slog.Attr {
	if a.Key == slog.TimeKey || a.Key == slog.LevelKey {
		return a
	}
	if SecretKey(a.Key) {
		return slog.String(a.Key, Redacted)
	}
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, Scrub(v.String()))
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return slog.String(a.Key, Scrub(err.Error()))
		}
		if s, ok := v.Any().(interface{ String() string }); ok {
			return slog.String(a.Key, Scrub(s.String()))
		}
	}
	return a
}

// Tee sends every record to each handler that takes its level.
func Tee(hs ...slog.Handler) slog.Handler { return tee(hs) }

type tee []slog.Handler

func (t tee) Enabled(ctx context.Context, l slog.Level) bool {
	for _, h := range t {
		if h.Enabled(ctx, l) {
			return true
		}
	}
	return false
}

func (t tee) Handle(ctx context.Context, r slog.Record) error {
	var first error
	for _, h := range t {
		if h.Enabled(ctx, r.Level) {
			if err := h.Handle(ctx, r.Clone()); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}

func (t tee) WithAttrs(as []slog.Attr) slog.Handler {
	out := make(tee, len(t))
	for i, h := range t {
		out[i] = h.WithAttrs(as)
	}
	return out
}

func (t tee) WithGroup(name string) slog.Handler {
	out := make(tee, len(t))
	for i, h := range t {
		out[i] = h.WithGroup(name)
	}
	return out
}
