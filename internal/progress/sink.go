package progress

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"
)

// LogSink writes reports to a slog.Logger: "<what> progress" at INFO while
// the work runs, then "<what> done" (INFO), "<what> canceled" (INFO) or
// "<what> failed" (WARN), each with Status.LogAttrs.
type LogSink struct {
	Logger *slog.Logger
}

// Report writes one line.
func (l LogSink) Report(s Status) {
	level, msg := slog.LevelInfo, s.What+" progress"
	if s.Final {
		switch {
		case s.Err == nil:
			msg = s.What + " done"
		case Canceled(s.Err):
			msg = s.What + " canceled"
		default:
			level, msg = slog.LevelWarn, s.What+" failed"
		}
	}
	l.Logger.LogAttrs(context.Background(), level, msg, s.LogAttrs()...)
}

// Lines writes each report as one plain line (Status.String) to W: the
// command line's output when it is not a terminal.
type Lines struct {
	W io.Writer
}

// Report writes one line.
func (l Lines) Report(s Status) {
	fmt.Fprintln(l.W, s.String())
}

// BarInterval is how often a Bar redraws.
const BarInterval = 200 * time.Millisecond

// barWidth is the number of cells of the bar itself.
const barWidth = 24

// Bar draws the report as one line that it redraws in place on W, a
// terminal: a bar when the total is known, the counts, the rate and the
// time left. The summary replaces it and ends the line.
type Bar struct {
	W io.Writer
}

// Report redraws the line.
func (b Bar) Report(s Status) {
	if s.Final {
		fmt.Fprintf(b.W, "\r%s\x1b[K\n", s.String())
		return
	}
	var line strings.Builder
	line.WriteString(s.What)
	if s.Phase != "" {
		line.WriteString(" (" + s.Phase + ")")
	}
	if f, ok := s.Fraction(); ok {
		full := int(f * barWidth)
		line.WriteString(" [" + strings.Repeat("=", full))
		if full < barWidth {
			line.WriteString(">" + strings.Repeat(" ", barWidth-full-1))
		}
		fmt.Fprintf(&line, "] %5s%%", formatPercent(f))
	}
	if c := s.counts(); c != "" {
		line.WriteString("  " + c)
	}
	if r := s.RateText(); r != "" {
		line.WriteString("  " + r)
	}
	if s.Left >= 0 {
		line.WriteString("  " + FormatDuration(s.Left) + " left")
	} else {
		line.WriteString("  " + FormatDuration(s.Elapsed) + " elapsed")
	}
	fmt.Fprintf(b.W, "\r%s\x1b[K", line.String())
}

// Terminal is the sink for the command line's progress on f (its
// standard error): a Bar when f is a terminal, else Lines; and the
// interval that suits it (BarInterval, or DefaultInterval between lines).
func Terminal(f *os.File) (Sink, time.Duration) {
	if IsTerminal(f) {
		return Bar{W: f}, BarInterval
	}
	return Lines{W: f}, DefaultInterval
}

// IsTerminal reports whether f is a character device other than a dumb
// terminal (TERM=dumb).
func IsTerminal(f *os.File) bool {
	if os.Getenv("TERM") == "dumb" {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
