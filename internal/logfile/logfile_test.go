package logfile_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"svcd/internal/logfile"
)

// clock is a settable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// line writes one line stamped with d's clock.
func line(t testing.TB, d *logfile.Dir, fields map[string]any) {
	t.Helper()
	fields["time"] = d.Now()
	b, err := json.Marshal(fields)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Write(append(b, '\n')); err != nil {
		t.Fatal(err)
	}
}

// TestDayFiles: lines go to the file of the clock's UTC day, a new file
// at the first line after midnight; Query reads across days newest first
// and pages.
func TestDayFiles(t *testing.T) {
	c := &clock{t: time.Date(2030, 6, 1, 23, 59, 58, 0, time.FixedZone("X", 5*3600))}
	dir := t.TempDir()
	d := logfile.Open(dir, logfile.Options{Now: c.now})
	defer d.Close()
	for i := 0; i < 5; i++ {
		line(t, d, map[string]any{"n": i, "level": "INFO"})
		c.add(time.Second)
	}
	// 2030-06-01 23:59:58 +05:00 is 18:59:58 UTC: all on 2030-06-01 UTC.
	c.t = time.Date(2030, 6, 1, 23, 59, 59, 0, time.UTC)
	line(t, d, map[string]any{"n": 5, "level": "WARN"})
	c.add(2 * time.Second)
	line(t, d, map[string]any{"n": 6, "level": "ERROR"})
	d.Flush()
	for day, want := range map[string]int{"2030-06-01": 6, "2030-06-02": 1} {
		b, err := os.ReadFile(filepath.Join(dir, logfile.FileName(day)))
		if err != nil || bytes.Count(b, []byte("\n")) != want {
			t.Errorf("%s: %v, %d lines, want %d", day, err, bytes.Count(b, []byte("\n")), want)
		}
	}
	all := logfile.Query{From: time.Date(2030, 6, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2030, 6, 2, 23, 0, 0, 0, time.UTC)}
	var got []string
	for page := 1; page <= 3; page++ {
		q := all
		q.Page, q.PerPage = page, 3
		p, err := d.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		if p.TotalItems != 7 || p.TotalPages != 3 {
			t.Errorf("page %d: %+v", page, p)
		}
		for _, l := range p.Data {
			var v struct{ N int }
			_ = json.Unmarshal(l, &v)
			got = append(got, fmt.Sprint(v.N))
		}
	}
	if strings.Join(got, "") != "6543210" {
		t.Errorf("newest first over two days: %v", got)
	}
	warn := slog.LevelWarn
	q := all
	q.Level = &warn
	if p, _ := d.Query(q); p.TotalItems != 2 {
		t.Errorf("level warn: %+v", p)
	}
	days, _ := d.Days(all.From, all.To)
	if strings.Join(days, ",") != "2030-06-02,2030-06-01" {
		t.Errorf("days: %v", days)
	}
}

// TestDiskErrorsAreCounted: a folder that cannot be written drops lines,
// counts them and says so once on stderr; Write never fails.
func TestDiskErrorsAreCounted(t *testing.T) {
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	d := logfile.Open(filepath.Join(blocker, "logs"), logfile.Options{Stderr: &stderr})
	defer d.Close()
	for i := 0; i < 3; i++ {
		if n, err := d.Write([]byte("{}\n")); err != nil || n != 3 {
			t.Fatalf("write: %d %v", n, err)
		}
	}
	if d.Errors() != 3 || strings.Count(stderr.String(), "\n") != 1 || !strings.Contains(stderr.String(), "reported once") {
		t.Errorf("errors %d, stderr %q", d.Errors(), stderr.String())
	}
}

// TestHandlerRedacts: slog lines reach the folder as JSON with kind app,
// secret attributes redacted and secrets scrubbed from strings and
// errors; the tee keeps the other handler's lines whole.
func TestHandlerRedacts(t *testing.T) {
	dir := t.TempDir()
	d := logfile.Open(dir, logfile.Options{})
	var other bytes.Buffer
	log := slog.New(logfile.Tee(slog.NewTextHandler(&other, nil), d.Handler(slog.LevelInfo))).With("node", "n1")
	log.Info("signed in", "password", "hunter22", "Authorization", "Bearer abc.def", "smtp_secret", "s3cr3t",
		"url", "https://x/cb?code=c0de&state=st8&ok=1", "err", errors.New("GET /x?token=tok123: bad"),
		"hdr", "bearer tokentoken", "jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig")
	log.Debug("below the level")
	d.Close()
	b, _ := os.ReadFile(filepath.Join(dir, logfile.FileName(time.Now().UTC().Format(logfile.DayLayout))))
	for _, secret := range []string{"hunter22", "abc.def", "s3cr3t", "c0de", "st8", "tok123", "tokentoken", "eyJhbGci"} {
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("%q in %s", secret, b)
		}
	}
	for _, want := range []string{`"kind":"app"`, `"node":"n1"`, `"msg":"signed in"`, `ok=1`, logfile.Redacted} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("no %s in %s", want, b)
		}
	}
	if bytes.Contains(b, []byte("below the level")) || !strings.Contains(other.String(), "hunter22") {
		t.Errorf("levels or tee: file %s, other %s", b, other.String())
	}
}

// FuzzLogQuery: any JSONPath text either fails to compile or compiles to
// a matcher that Query runs without error over any line; every answered
// line contains q; a secret query value never survives ScrubQuery.
func FuzzLogQuery(f *testing.F) {
	f.Add("$[?@.status >= 500]", "GET", `{"status":503}`, "tok")
	f.Add("$[*].principal.id", "", `{"principal":{"id":"x"}}`, "abc")
	f.Add("$[?(@.level == 'WARN')]", "warn", `not json`, "%zz")
	f.Add("$..[?match(@, 'a.*')]", "a", `[1,2,{"a":"aa"}]`, "")
	f.Fuzz(func(t *testing.T, query, q, raw, secret string) {
		d := logfile.Open(t.TempDir(), logfile.Options{})
		defer d.Close()
		line(t, d, map[string]any{"msg": raw, "level": "INFO", "status": len(raw)})
		_, _ = d.Write([]byte(strings.ReplaceAll(raw, "\n", " ") + "\n"))
		match, err := logfile.Compile(query)
		if err != nil {
			return
		}
		p, err := d.Query(logfile.Query{From: d.Now().Add(-time.Hour), To: d.Now().Add(time.Hour), Q: q, Match: match, Page: 1, PerPage: 10})
		if err != nil {
			t.Fatalf("query %q: %v", query, err)
		}
		for _, l := range p.Data {
			if !bytes.Contains(bytes.ToLower(l), bytes.ToLower([]byte(q))) {
				t.Errorf("line %s lacks q %q", l, q)
			}
		}
		if len(secret) >= 3 && !strings.ContainsAny(secret, "&=;+%# \t\r\n") {
			if got := logfile.ScrubQuery("a=1&token=" + secret); strings.Contains(got, secret) && !strings.Contains("a=1&token=[redacted]", secret) {
				t.Errorf("ScrubQuery kept %q: %s", secret, got)
			}
		}
	})
}

// TestScrubQueryKeepsShapeOnly: a log line keeps paging and shape values
// but not what a request looked for (a filter, a search, a value a rule
// reads), which the rules may hide from an admin who reads logs.
func TestScrubQueryKeepsShapeOnly(t *testing.T) {
	got := logfile.ScrubQuery(`page=2&perPage=50&sort=-created&filter=email%3D%22alice%40example.com%22&q=alice&expect=41&token=abc`)
	for _, keep := range []string{"page=2", "perPage=50", "sort=-created", "filter=%5Bredacted%5D", "q=%5Bredacted%5D", "expect=%5Bredacted%5D", "token=%5Bredacted%5D"} {
		if !strings.Contains(got, keep) {
			t.Errorf("ScrubQuery = %s, want it to contain %s", got, keep)
		}
	}
	for _, gone := range []string{"alice", "41", "abc"} {
		if strings.Contains(got, gone) {
			t.Errorf("ScrubQuery = %s kept %q", got, gone)
		}
	}
}
