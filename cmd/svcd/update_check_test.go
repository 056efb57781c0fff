package main

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// syncBuffer is a log sink safe for the checker's goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// checkerFor is a checker reading settings from m, logging to buf.
func checkerFor(m map[string]string, current string, buf *syncBuffer) *updateChecker {
	var mu sync.Mutex
	setting := func(k string) string { mu.Lock(); defer mu.Unlock(); return m[k] }
	u := newUpdateChecker(setting, current, slog.New(slog.NewTextHandler(buf, nil)))
	u.client.Timeout = 300 * time.Millisecond
	return u
}

func TestUpdateCheck(t *testing.T) {
	var calls atomic.Int64
	answer := `{"version":"v1.4.0","url":"https://example.com/releases/v1.4.0"}`
	var answerMu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if ua := r.Header.Get("User-Agent"); !strings.HasPrefix(ua, "svcd/") {
			t.Errorf("User-Agent %q", ua)
		}
		switch r.URL.Path {
		case "/slow":
			select {
			case <-time.After(5 * time.Second):
			case <-r.Context().Done():
			}
		case "/gone":
			http.Error(w, "gone", http.StatusGone)
		default:
			answerMu.Lock()
			defer answerMu.Unlock()
			w.Write([]byte(answer))
		}
	}))
	defer srv.Close()
	// A port nothing listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String() + "/latest.json"
	l.Close()

	cases := []struct {
		name, enabled, url, current, answer string
		want                                updateOutcome
		log                                 string
		calls                               int64
	}{
		{"no url: nothing is called", "1", "", "v1.0.0", "", updateNoURL, "", 0},
		{"off: nothing is called", "0", srv.URL, "v1.0.0", "", updateOff, "", 0},
		{"a newer release", "1", srv.URL + "/latest.json", "v1.3.9", "", updateNewer, "a newer release is available", 1},
		{"the same release", "1", srv.URL + "/latest.json", "v1.4.0", "", updateCurrent, "up to date", 1},
		{"a newer build than the release", "1", srv.URL + "/latest.json", "v1.10.0", "", updateCurrent, "up to date", 1},
		{"a dev build", "1", srv.URL + "/latest.json", "dev", "", updateUnknown, "latest release", 1},
		{"unreachable", "1", closed, "v1.0.0", "", updateUnreachable, "unreachable", 0},
		{"a timeout", "1", srv.URL + "/slow", "v1.0.0", "", updateUnreachable, "unreachable", 1},
		{"an error status", "1", srv.URL + "/gone", "v1.0.0", "", updateUnreachable, "status 410", 1},
		{"not JSON", "1", srv.URL + "/latest.json", "v1.0.0", "<html>", updateBadAnswer, "not {version, url}", 1},
		{"no version", "1", srv.URL + "/latest.json", "v1.0.0", `{"url":"x"}`, updateBadAnswer, "not {version, url}", 1},
		{"not an http URL", "1", "file:///etc/passwd", "v1.0.0", "", updateBadURL, "not an http(s) URL", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			answerMu.Lock()
			if c.answer != "" {
				answer = c.answer
			} else {
				answer = `{"version":"v1.4.0","url":"https://example.com/releases/v1.4.0"}`
			}
			answerMu.Unlock()
			before := calls.Load()
			var buf syncBuffer
			u := checkerFor(map[string]string{"update_check.enabled": c.enabled, "update_check.url": c.url}, c.current, &buf)
			start := time.Now()
			got, ans := u.check(context.Background())
			if got != c.want {
				t.Fatalf("outcome %q, want %q; log %s", got, c.want, buf.String())
			}
			if time.Since(start) > 3*time.Second {
				t.Errorf("the check took %v", time.Since(start))
			}
			if !strings.Contains(buf.String(), c.log) {
				t.Errorf("log %q lacks %q", buf.String(), c.log)
			}
			if (c.want == updateNewer || c.want == updateCurrent) && ans.URL != "https://example.com/releases/v1.4.0" {
				t.Errorf("answer %+v", ans)
			}
			if n := calls.Load() - before; n != c.calls {
				t.Errorf("%d calls to the server, want %d", n, c.calls)
			}
		})
	}
}

// TestUpdateCheckRunsInBackground: run checks after its first wait, again
// after each interval, and ends with its context.
func TestUpdateCheckRunsInBackground(t *testing.T) {
	hit := make(chan struct{}, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hit <- struct{}{}
		w.Write([]byte(`{"version":"v2.0.0","url":"https://example.com/r"}`))
	}))
	defer srv.Close()
	var buf syncBuffer
	settings := map[string]string{"update_check.enabled": "1", "update_check.url": srv.URL}
	u := checkerFor(settings, "v1.0.0", &buf)
	u.first, u.every = 20*time.Millisecond, 20*time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); u.run(ctx) }()
	for range 2 {
		select {
		case <-hit:
		case <-time.After(5 * time.Second):
			t.Fatal("no check")
		}
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("run did not end with its context")
	}
	if !strings.Contains(buf.String(), "latest=v2.0.0") {
		t.Errorf("log %s", buf.String())
	}
}

func TestCompareVersions(t *testing.T) {
	for _, c := range []struct {
		a, b string
		cmp  int
		ok   bool
	}{
		{"v1.2.3", "v1.2.3", 0, true},
		{"v1.10.0", "v1.9.9", 1, true},
		{"1.2.3", "v1.3.0", -1, true},
		{"v2.0.0-rc1", "v1.9.0", 1, true},
		{"dev", "v1.0.0", 0, false},
		{"v1.2", "v1.2.0", 0, false},
	} {
		if cmp, ok := compareVersions(c.a, c.b); cmp != c.cmp || ok != c.ok {
			t.Errorf("compare(%s, %s) = %d %v", c.a, c.b, cmp, ok)
		}
	}
}
