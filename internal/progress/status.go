package progress

import (
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"
)

// Status is one report: how far the work got at one moment, or, when
// Final, its summary.
type Status struct {
	// What names the work ("csv import"), Phase its current step ("" for
	// work done in one step).
	What, Phase string
	// Unit names what Done counts ("rows"); empty when only bytes count.
	Unit string
	// CountsBytes says Bytes is counted.
	CountsBytes bool
	// Done of Total units, Bytes of TotalBytes bytes (a total of 0 is not
	// known).
	Done, Total       int64
	Bytes, TotalBytes int64
	// Elapsed is the time since the work started; PhaseElapsed since its
	// phase started (the time rates are measured over; the whole work for
	// the summary).
	Elapsed, PhaseElapsed time.Duration
	// Left is the estimated time left, -1 when no total is known (and in
	// the summary).
	Left time.Duration
	// Final marks the summary; Err is why the work stopped (nil: it
	// completed).
	Final bool
	Err   error
	// Attrs describe the work (every report), Extra what it produced
	// (summary only).
	Attrs, Extra []slog.Attr
}

// Fraction is the part of the work done, from the bytes when their total
// is known, else from the units; ok is false without a total.
func (s Status) Fraction() (f float64, ok bool) {
	switch {
	case s.TotalBytes > 0:
		return min(float64(s.Bytes)/float64(s.TotalBytes), 1), true
	case s.Total > 0:
		return min(float64(s.Done)/float64(s.Total), 1), true
	}
	return 0, false
}

// rateOver is the time rates are measured over.
func (s Status) rateOver() time.Duration {
	if s.Final {
		return s.Elapsed
	}
	return s.PhaseElapsed
}

// Rate is units per second (0 before any time passed).
func (s Status) Rate() float64 {
	d := s.rateOver().Seconds()
	if d <= 0 {
		return 0
	}
	return float64(s.Done) / d
}

// ByteRate is bytes per second (0 before any time passed).
func (s Status) ByteRate() float64 {
	d := s.rateOver().Seconds()
	if d <= 0 {
		return 0
	}
	return float64(s.Bytes) / d
}

// RateText is the rate as a person reads it: "2400 rows/s, 1.5 MiB/s".
func (s Status) RateText() string {
	var parts []string
	if s.Unit != "" {
		parts = append(parts, FormatCount(s.Rate())+" "+s.Unit+"/s")
	}
	if s.CountsBytes {
		parts = append(parts, FormatBytes(int64(s.ByteRate()))+"/s")
	}
	return strings.Join(parts, ", ")
}

// counts is "12000 of 40000 rows, 3.1 MiB of 8.0 MiB".
func (s Status) counts() string {
	var parts []string
	if s.Unit != "" {
		c := strconv.FormatInt(s.Done, 10)
		if s.Total > 0 && !s.Final {
			c += " of " + strconv.FormatInt(s.Total, 10)
		}
		parts = append(parts, c+" "+s.Unit)
	}
	if s.CountsBytes {
		c := FormatBytes(s.Bytes)
		if s.TotalBytes > 0 && !s.Final {
			c += " of " + FormatBytes(s.TotalBytes)
		}
		parts = append(parts, c)
	}
	return strings.Join(parts, ", ")
}

// String is the report as one plain line, for example
//
//	csv import collection=posts: 12000 rows, 3.0 MiB of 8.0 MiB (37.5%), 2400 rows/s, 614.4 KiB/s, 5s elapsed, 8.3s left
//	csv import collection=posts done: 32000 rows, 8.0 MiB in 13.3s (2406 rows/s, 615.9 KiB/s) created=31990 failed=10
//	checking the database done in 1.2s
func (s Status) String() string {
	var b strings.Builder
	b.WriteString(s.What)
	if s.Phase != "" && !s.Final {
		b.WriteString(" (" + s.Phase + ")")
	}
	for _, a := range s.Attrs {
		b.WriteString(" " + a.String())
	}
	if s.Final {
		switch {
		case s.Err == nil:
			b.WriteString(" done")
		case Canceled(s.Err):
			b.WriteString(" canceled")
		default:
			b.WriteString(" failed")
		}
		if c := s.counts(); c != "" {
			b.WriteString(": " + c)
		}
		b.WriteString(" in " + FormatDuration(s.Elapsed))
		if r := s.RateText(); r != "" {
			b.WriteString(" (" + r + ")")
		}
		for _, a := range s.Extra {
			b.WriteString(" " + a.String())
		}
		if s.Err != nil {
			b.WriteString(": " + s.Err.Error())
		}
		return b.String()
	}
	b.WriteString(": ")
	if c := s.counts(); c != "" {
		b.WriteString(c)
		if f, ok := s.Fraction(); ok {
			fmt.Fprintf(&b, " (%s%%)", formatPercent(f))
		}
		b.WriteString(", ")
	}
	if r := s.RateText(); r != "" {
		b.WriteString(r + ", ")
	}
	b.WriteString(FormatDuration(s.Elapsed) + " elapsed")
	if s.Left >= 0 {
		b.WriteString(", " + FormatDuration(s.Left) + " left")
	}
	return b.String()
}

// LogAttrs are the report's attributes for a log line: the work's
// attributes, the phase, the counts (keyed by the unit: rows=12000, and
// bytes=...), total_<unit> and total_bytes when known, percent, rate,
// elapsed and left (durations as text: "8.3s"); the summary adds its extra
// attributes and err.
func (s Status) LogAttrs() []slog.Attr {
	out := make([]slog.Attr, 0, len(s.Attrs)+len(s.Extra)+10)
	out = append(out, s.Attrs...)
	if s.Phase != "" && !s.Final {
		out = append(out, slog.String("phase", s.Phase))
	}
	if s.Unit != "" {
		out = append(out, slog.Int64(s.Unit, s.Done))
		if s.Total > 0 && !s.Final {
			out = append(out, slog.Int64("total_"+s.Unit, s.Total))
		}
	}
	if s.CountsBytes {
		out = append(out, slog.Int64("bytes", s.Bytes))
		if s.TotalBytes > 0 && !s.Final {
			out = append(out, slog.Int64("total_bytes", s.TotalBytes))
		}
	}
	if f, ok := s.Fraction(); ok && !s.Final {
		out = append(out, slog.String("percent", formatPercent(f)))
	}
	if r := s.RateText(); r != "" {
		out = append(out, slog.String("rate", r))
	}
	out = append(out, slog.String("elapsed", FormatDuration(s.Elapsed)))
	if s.Left >= 0 && !s.Final {
		out = append(out, slog.String("left", FormatDuration(s.Left)))
	}
	if s.Final {
		out = append(out, s.Extra...)
		if s.Err != nil {
			out = append(out, slog.String("err", s.Err.Error()))
		}
	}
	return out
}

// FormatBytes is n in binary units: "512 B", "3.1 MiB".
func FormatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	v, i := float64(n)/unit, 0
	for v >= unit && i < 4 {
		v /= unit
		i++
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + " " + [...]string{"KiB", "MiB", "GiB", "TiB", "PiB"}[i]
}

// FormatCount is a rate of units: whole above 10, one decimal below.
func FormatCount(v float64) string {
	if v >= 10 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// FormatDuration rounds d to what a person reads: milliseconds below a
// second, tenths below a minute, seconds above.
func FormatDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

func formatPercent(f float64) string {
	return strconv.FormatFloat(f*100, 'f', 1, 64)
}
