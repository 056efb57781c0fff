package progress_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"svcd/internal/progress"
	"svcd/internal/progress/progresstest"
)

// TestLogReportsWhileWorking counts rows and bytes of a known total for a
// while with a short interval: the log gets progress lines with growing
// counts, a percent and the time left, then one summary.
func TestLogReportsWhileWorking(t *testing.T) {
	rec := progresstest.New()
	r := progress.Log(rec.Logger(), "test work", progress.Options{
		Unit: "rows", Bytes: true, TotalBytes: 1000, Interval: 10 * time.Millisecond,
		Attrs: []slog.Attr{slog.String("collection", "posts")},
	})
	for i := 0; i < 50; i++ {
		r.Add(2)
		r.AddBytes(20)
		time.Sleep(2 * time.Millisecond)
	}
	r.Finish(nil, slog.Int("created", 100))
	r.Finish(errors.New("ignored: only the first Finish reports"))

	lines, sum := progresstest.CheckProgress(t, rec, "test work", "rows", 3)
	if n := len(rec.Lines()); n != len(lines)+1 {
		t.Errorf("%d lines logged, want the %d progress lines and the summary", n, len(lines))
	}
	for _, l := range lines {
		for _, k := range []string{"collection", "bytes", "total_bytes", "percent", "rate", "elapsed"} {
			if _, ok := l.Attrs[k]; !ok {
				t.Errorf("progress line lacks %s: %v", k, l.Attrs)
			}
		}
		if l.Int("bytes") > 0 && l.Str("left") == "" {
			t.Errorf("progress line lacks the time left: %v", l.Attrs)
		}
		if rate := l.Str("rate"); !strings.Contains(rate, "rows/s, ") || !strings.HasSuffix(rate, "B/s") {
			t.Errorf("rate = %q, want rows/s and bytes/s", rate)
		}
	}
	if sum.Int("rows") != 100 || sum.Int("bytes") != 1000 || sum.Int("created") != 100 || sum.Str("collection") != "posts" {
		t.Errorf("summary %v", sum.Attrs)
	}
	if _, ok := sum.Attrs["left"]; ok {
		t.Errorf("summary has a time left: %v", sum.Attrs)
	}
}

// TestLogFailedAndCanceled: a failure is a WARN naming the error, a
// cancellation an INFO.
func TestLogFailedAndCanceled(t *testing.T) {
	rec := progresstest.New()
	progress.Log(rec.Logger(), "a", progress.Options{Unit: "rows"}).Finish(errors.New("disk full"))
	progress.Log(rec.Logger(), "b", progress.Options{}).Finish(fmt.Errorf("read: %w", context.Canceled))
	lines := rec.Lines()
	if len(lines) != 2 {
		t.Fatalf("%d lines: %+v", len(lines), lines)
	}
	if lines[0].Message != "a failed" || lines[0].Level != slog.LevelWarn || lines[0].Str("err") != "disk full" {
		t.Errorf("failure: %+v", lines[0])
	}
	if lines[1].Message != "b canceled" || lines[1].Level != slog.LevelInfo {
		t.Errorf("cancellation: %+v", lines[1])
	}
}

// TestPhases: each phase counts from zero against its own total, and its
// reports name it; the summary has the counts of the last phase that
// counted.
func TestPhases(t *testing.T) {
	rec := progresstest.New()
	r := progress.Log(rec.Logger(), "snap", progress.Options{Interval: 5 * time.Millisecond})
	r.Phase("copy", progress.Options{Bytes: true, TotalBytes: 100})
	r.AddBytes(100)
	time.Sleep(30 * time.Millisecond)
	r.Phase("write", progress.Options{Bytes: true, TotalBytes: 50})
	r.AddBytes(10)
	time.Sleep(30 * time.Millisecond)
	r.Phase("check", progress.Options{})
	time.Sleep(30 * time.Millisecond)
	r.Finish(nil)
	lines := rec.Lines("snap progress")
	if sum := rec.Lines("snap done"); len(sum) != 1 || sum[0].Int("bytes") != 10 {
		t.Errorf("summary %+v, want the write phase's 10 bytes", sum)
	}
	seen := map[string]bool{}
	var lastWrite progresstest.Line
	for _, l := range lines {
		seen[l.Str("phase")] = true
		switch l.Str("phase") {
		case "write":
			lastWrite = l
			if l.Int("total_bytes") != 50 {
				t.Errorf("write phase: %v", l.Attrs)
			}
		case "check":
			// It counts nothing: only the time it has taken.
			if _, ok := l.Attrs["bytes"]; ok || l.Str("rate") != "" || l.Str("elapsed") == "" {
				t.Errorf("check phase: %v", l.Attrs)
			}
		}
	}
	if !seen["copy"] || !seen["write"] || !seen["check"] {
		t.Errorf("phases reported: %v", seen)
	}
	if lastWrite.Int("bytes") != 10 || lastWrite.Str("percent") != "20.0" {
		t.Errorf("last report of the write phase: %v", lastWrite.Attrs)
	}
}

func TestNilReporter(t *testing.T) {
	var r *progress.Reporter
	r.Add(1)
	r.AddBytes(1)
	r.SetBytes(1)
	r.SetTotal(1)
	r.SetTotalBytes(1)
	r.Phase("x", progress.Options{Total: 1})
	r.Finish(nil)
}

func TestStatusText(t *testing.T) {
	s := progress.Status{What: "csv import", Unit: "rows", CountsBytes: true, Done: 12000, Bytes: 3 << 20, TotalBytes: 8 << 20,
		Elapsed: 5 * time.Second, PhaseElapsed: 5 * time.Second, Left: 8300 * time.Millisecond,
		Attrs: []slog.Attr{slog.String("collection", "posts")}}
	want := "csv import collection=posts: 12000 rows, 3.0 MiB of 8.0 MiB (37.5%), 2400 rows/s, 614.4 KiB/s, 5s elapsed, 8.3s left"
	if got := s.String(); got != want {
		t.Errorf("String()\n got %s\nwant %s", got, want)
	}
	s.Final, s.Left, s.Extra = true, -1, []slog.Attr{slog.Int("failed", 0)}
	want = "csv import collection=posts done: 12000 rows, 3.0 MiB in 5s (2400 rows/s, 614.4 KiB/s) failed=0"
	if got := s.String(); got != want {
		t.Errorf("String()\n got %s\nwant %s", got, want)
	}
	idle := progress.Status{What: "database check", Elapsed: 1500 * time.Millisecond, Left: -1}
	if got, want := idle.String(), "database check: 1.5s elapsed"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	idle.Final = true
	if got, want := idle.String(), "database check done in 1.5s"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 5 << 30: "5.0 GiB"} {
		if got := progress.FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestBarAndLines: on a terminal the line is redrawn in place and ends
// with the summary; elsewhere every report is a line of its own; a brief
// Reporter says nothing of work shorter than its interval.
func TestBarAndLines(t *testing.T) {
	var bar bytes.Buffer
	s := progress.Status{What: "check", Bytes: 50, TotalBytes: 100, CountsBytes: true, Elapsed: time.Second, PhaseElapsed: time.Second, Left: time.Second}
	progress.Bar{W: &bar}.Report(s)
	if got := bar.String(); !strings.HasPrefix(got, "\rcheck [============>           ]  50.0%  50 B of 100 B  50 B/s  1s left") || strings.Contains(got, "\n") {
		t.Errorf("bar %q", got)
	}
	s.Final, s.Bytes = true, 100
	progress.Bar{W: &bar}.Report(s)
	if got := bar.String(); !strings.HasSuffix(got, "\rcheck done: 100 B in 1s (100 B/s)\x1b[K\n") {
		t.Errorf("bar summary %q", got)
	}

	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if progress.IsTerminal(f) {
		t.Fatal("a file is taken for a terminal")
	}
	sink, every := progress.Terminal(f)
	if _, ok := sink.(progress.Lines); !ok || every != progress.DefaultInterval {
		t.Fatalf("Terminal(file) = %T, %v", sink, every)
	}
	progress.Start(sink, "quick", progress.Options{Unit: "entries", Brief: true, Interval: time.Hour}).Finish(nil)
	r := progress.Start(sink, "verify", progress.Options{Unit: "entries", Total: 10, Interval: 5 * time.Millisecond, Brief: true})
	r.Add(5)
	time.Sleep(30 * time.Millisecond)
	r.Add(5)
	r.Finish(nil)
	b, _ := os.ReadFile(f.Name())
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "verify: 5 of 10 entries (50.0%), ") ||
		!strings.HasPrefix(lines[len(lines)-1], "verify done: 10 entries in ") {
		t.Errorf("lines:\n%s", b)
	}
}
