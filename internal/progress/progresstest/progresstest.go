// Package progresstest captures what a component logs, so a test can check
// the progress lines and the summary of its long work (internal/progress).
package progresstest

import (
	"context"
	"log/slog"
	"sync"
	"testing"
)

// Line is one captured log record.
type Line struct {
	Level   slog.Level
	Message string
	Attrs   map[string]slog.Value
}

// Int is the attribute key as an integer (0 when absent).
func (l Line) Int(key string) int64 {
	v, ok := l.Attrs[key]
	if !ok {
		return 0
	}
	switch v.Kind() {
	case slog.KindInt64:
		return v.Int64()
	case slog.KindUint64:
		return int64(v.Uint64())
	}
	return 0
}

// Str is the attribute key as text ("" when absent).
func (l Line) Str(key string) string {
	if v, ok := l.Attrs[key]; ok {
		return v.String()
	}
	return ""
}

// Recorder is a slog.Handler that keeps every record, at every level.
// Attributes added with With are kept on each record.
type Recorder struct {
	mu    *sync.Mutex
	lines *[]Line
	attrs []slog.Attr
}

// New returns an empty Recorder.
func New() *Recorder {
	return &Recorder{mu: &sync.Mutex{}, lines: &[]Line{}}
}

// Logger is a logger writing to r.
func (r *Recorder) Logger() *slog.Logger { return slog.New(r) }

// Enabled is true at every level.
func (r *Recorder) Enabled(context.Context, slog.Level) bool { return true }

// Handle keeps the record.
func (r *Recorder) Handle(_ context.Context, rec slog.Record) error {
	l := Line{Level: rec.Level, Message: rec.Message, Attrs: map[string]slog.Value{}}
	for _, a := range r.attrs {
		l.Attrs[a.Key] = a.Value.Resolve()
	}
	rec.Attrs(func(a slog.Attr) bool {
		l.Attrs[a.Key] = a.Value.Resolve()
		return true
	})
	r.mu.Lock()
	defer r.mu.Unlock()
	*r.lines = append(*r.lines, l)
	return nil
}

// WithAttrs keeps attrs on every later record.
func (r *Recorder) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *r
	c.attrs = append(append([]slog.Attr(nil), r.attrs...), attrs...)
	return &c
}

// WithGroup ignores the group (the tests read flat attributes).
func (r *Recorder) WithGroup(string) slog.Handler { return r }

// Lines are the records kept so far whose message is one of msgs (every
// record without msgs), in order.
func (r *Recorder) Lines(msgs ...string) []Line {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Line
	for _, l := range *r.lines {
		if len(msgs) == 0 {
			out = append(out, l)
			continue
		}
		for _, m := range msgs {
			if l.Message == m {
				out = append(out, l)
				break
			}
		}
	}
	return out
}

// CheckProgress checks the log of one run of the work named what: at
// least min "<what> progress" lines whose count under key never goes down
// within a phase and grows at least once, each with an elapsed time and,
// when it has the count, a rate; then exactly one "<what> done" summary. It returns the progress lines and
// the summary.
func CheckProgress(t testing.TB, r *Recorder, what, key string, min int) (progress []Line, summary Line) {
	t.Helper()
	progress = r.Lines(what + " progress")
	done := r.Lines(what+" done", what+" failed", what+" canceled")
	if len(done) != 1 || done[0].Message != what+" done" {
		t.Fatalf("%s: want one %q summary, got %+v", what, what+" done", done)
	}
	summary = done[0]
	if len(progress) < min {
		t.Fatalf("%s: %d progress lines, want at least %d", what, len(progress), min)
	}
	grew := false
	for i, l := range progress {
		_, counted := l.Attrs[key]
		if l.Level != slog.LevelInfo || (counted && l.Str("rate") == "") || l.Str("elapsed") == "" {
			t.Errorf("%s: progress line %d lacks its level, rate or elapsed time: %+v", what, i, l)
		}
		if i > 0 {
			prev, cur := progress[i-1].Int(key), l.Int(key)
			if cur < prev && progress[i-1].Str("phase") == l.Str("phase") {
				t.Errorf("%s: %s went down from %d to %d", what, key, prev, cur)
			}
			grew = grew || cur > prev
		}
	}
	if !grew {
		t.Errorf("%s: %s never grew across %d progress lines", what, key, len(progress))
	}
	return progress, summary
}
