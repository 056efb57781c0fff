package progress_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"svcd/internal/progress"
)

// records is a slog.Handler that keeps every record.
type records struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (h *records) Enabled(context.Context, slog.Level) bool { return true }
func (h *records) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.recs = append(h.recs, r.Clone())
	return nil
}
func (h *records) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *records) WithGroup(string) slog.Handler      { return h }

func (h *records) all() []slog.Record {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]slog.Record(nil), h.recs...)
}

func attrs(r slog.Record) map[string]slog.Value {
	m := map[string]slog.Value{}
	r.Attrs(func(a slog.Attr) bool { m[a.Key] = a.Value; return true })
	return m
}

// TestLogReportsWhileWorking counts rows and bytes of a known total for a
// while with a short interval: the log gets progress lines with growing
// counts, a percent and the time left, then one summary.
func TestLogReportsWhileWorking(t *testing.T) {
	h := &records{}
	r := progress.Log(slog.New(h), "test work", progress.Options{
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

	recs := h.all()
	var last int64 = -1
	progressLines := 0
	for _, rec := range recs[:len(recs)-1] {
		if rec.Message != "test work progress" || rec.Level != slog.LevelInfo {
			t.Fatalf("line %q at %v, want progress lines then the summary", rec.Message, rec.Level)
		}
		a := attrs(rec)
		rows := a["rows"].Int64()
		if rows < last {
			t.Errorf("rows went back from %d to %d", last, rows)
		}
		last = rows
		progressLines++
		for _, k := range []string{"collection", "bytes", "total_bytes", "percent", "rate", "elapsed", "left"} {
			if _, ok := a[k]; !ok {
				t.Errorf("progress line lacks %s: %v", k, a)
			}
		}
		if !strings.Contains(a["rate"].String(), "rows/s") || !strings.Contains(a["rate"].String(), "/s") {
			t.Errorf("rate = %q", a["rate"])
		}
	}
	if progressLines < 3 {
		t.Errorf("%d progress lines in %d records, want several", progressLines, len(recs))
	}
	sum := recs[len(recs)-1]
	a := attrs(sum)
	if sum.Message != "test work done" || a["rows"].Int64() != 100 || a["bytes"].Int64() != 1000 || a["created"].Int64() != 100 {
		t.Errorf("summary %q %v", sum.Message, a)
	}
	if _, ok := a["left"]; ok {
		t.Errorf("summary has a time left: %v", a)
	}
}

// TestLogFailedAndCanceled: a failure is a WARN naming the error, a
// cancellation an INFO.
func TestLogFailedAndCanceled(t *testing.T) {
	h := &records{}
	log := slog.New(h)
	progress.Log(log, "a", progress.Options{Unit: "rows"}).Finish(errors.New("disk full"))
	progress.Log(log, "b", progress.Options{}).Finish(fmt.Errorf("read: %w", context.Canceled))
	recs := h.all()
	if len(recs) != 2 {
		t.Fatalf("%d records", len(recs))
	}
	if recs[0].Message != "a failed" || recs[0].Level != slog.LevelWarn || attrs(recs[0])["err"].String() != "disk full" {
		t.Errorf("failure: %q %v %v", recs[0].Message, recs[0].Level, attrs(recs[0]))
	}
	if recs[1].Message != "b canceled" || recs[1].Level != slog.LevelInfo {
		t.Errorf("cancellation: %q %v", recs[1].Message, recs[1].Level)
	}
}

// TestPhases: each phase counts from zero against its own total, and its
// reports name it; the summary has the counts of the last phase that
// counted.
func TestPhases(t *testing.T) {
	h := &records{}
	r := progress.Log(slog.New(h), "snap", progress.Options{Interval: 5 * time.Millisecond})
	r.Phase("copy", "", 0, 100)
	r.AddBytes(100)
	time.Sleep(30 * time.Millisecond)
	r.Phase("write", "", 0, 50)
	r.AddBytes(10)
	time.Sleep(30 * time.Millisecond)
	r.Phase("check", "", 0, 0)
	r.Finish(nil)
	recs := h.all()
	// The summary carries the counts of the last phase that counted.
	if sum := attrs(recs[len(recs)-1]); recs[len(recs)-1].Message != "snap done" || sum["bytes"].Int64() != 10 {
		t.Errorf("summary %q %v", recs[len(recs)-1].Message, sum)
	}
	seen := map[string]bool{}
	var lastWrite map[string]slog.Value
	for _, rec := range recs {
		a := attrs(rec)
		if rec.Message == "snap progress" {
			seen[a["phase"].String()] = true
			if a["phase"].String() == "write" {
				lastWrite = a
				if a["total_bytes"].Int64() != 50 {
					t.Errorf("write phase: %v", a)
				}
			}
		}
	}
	if !seen["copy"] || !seen["write"] {
		t.Errorf("phases reported: %v", seen)
	}
	if lastWrite["bytes"].Int64() != 10 || lastWrite["percent"].String() != "20.0" {
		t.Errorf("last report of the write phase: %v", lastWrite)
	}
}

func TestNilReporter(t *testing.T) {
	var r *progress.Reporter
	r.Add(1)
	r.AddBytes(1)
	r.SetBytes(1)
	r.SetTotal(1)
	r.SetTotalBytes(1)
	r.Phase("x", "", 1, 1)
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
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 5 << 30: "5.0 GiB"} {
		if got := progress.FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestBarAndLines: on a terminal the line is redrawn in place and ends
// with the summary; elsewhere every report is a line of its own.
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
	r := progress.Start(sink, "verify", progress.Options{Unit: "entries", Total: 10, Interval: 5 * time.Millisecond})
	r.Add(5)
	time.Sleep(30 * time.Millisecond)
	r.Add(5)
	r.Finish(nil)
	b, _ := os.ReadFile(f.Name())
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "verify: 5 of 10 entries (50.0%), ") || lines[len(lines)-1] != strings.TrimSpace(lines[len(lines)-1]) ||
		!strings.HasPrefix(lines[len(lines)-1], "verify done: 10 entries in ") {
		t.Errorf("lines:\n%s", b)
	}
}
