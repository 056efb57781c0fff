package api_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"svcd/api"
	"svcd/api/apitest"
)

// TestSlowAnonymousBodiesAreCut reproduces issue 13's finding 6: many
// anonymous sockets each send 8 MiB of a body declared as 16 MiB, then
// trickle a byte now and then. Before, every body was buffered whole with
// no time limit (30 such sockets held about 465 MB; here the live heap grew
// by 260 MB and every socket was still open after 10 s). Now each one is
// cut when it falls under the minimum rate (408, or the connection
// closed), the anonymous body budget refuses the ones beyond it (503), and
// the live heap of this process (server and clients) grows by a bounded
// amount.
func TestSlowAnonymousBodiesAreCut(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 240 MiB over loopback")
	}
	const (
		sockets = 30
		burst   = 8 << 20
		grace   = 500 * time.Millisecond
	)
	s := apitest.Start(t, apitest.Options{BodyMinRate: 64 << 10, BodyGrace: grace})
	s.CreateCollection(t, public(coll("posts", "base", []map[string]any{f("title", "text")})))
	// A budget of 32 MiB rather than the default 64: buffers given back
	// while a collection runs still count in the live heap it reports
	// (floating garbage), so the heap may show up to about twice the
	// budget; with 32 MiB the bound below stays far from both the fix's
	// figure and the old code's (260 MB), and one or two sockets still get
	// to trickle (an 8 MiB body needs 24 MiB while its buffer grows).
	s.MustAdmin(t, http.StatusOK, http.MethodPatch, settingsURL, map[string]any{"http.anonymous_body_budget_bytes": 32 << 20})
	chunk := bytes.Repeat([]byte("a"), burst)
	chunk[0], chunk[1], chunk[2] = '{', '"', 't'

	base := liveHeap()
	peakHeap := watchHeap(20 * time.Millisecond)

	type outcome struct {
		status int
		err    error
		after  time.Duration
	}
	out := make(chan outcome, sockets)
	start := time.Now()
	for range sockets {
		go func() {
			conn := rawBody(t, s, http.MethodPost, "/api/v1/posts", 16<<20, nil)
			answered := make(chan struct{})
			go func() {
				defer close(answered)
				status, _, err := rawAnswer(conn, 10*time.Second)
				out <- outcome{status, err, time.Since(start)}
			}()
			conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
			if _, err := conn.Write(chunk); err != nil {
				return // cut while sending: the answer (or the close) is read above
			}
			for {
				select {
				case <-answered:
					return
				case <-time.After(100 * time.Millisecond):
				}
				if _, err := conn.Write([]byte("a")); err != nil {
					return
				}
			}
		}()
	}
	counts := map[int]int{}
	var last time.Duration
	for range sockets {
		o := <-out
		last = max(last, o.after)
		switch {
		case o.err == nil:
			counts[o.status]++
		case errors.Is(o.err, context.DeadlineExceeded) || strings.Contains(o.err.Error(), "timeout"):
			counts[-1]++ // still open after 10 s
		default:
			counts[0]++ // closed without an answer the client could read
		}
	}
	growth := int64(peakHeap()) - int64(base)
	t.Logf("answers %v (0: closed, -1: still open) within %v; live heap %.1f MB before, peak growth %.1f MB",
		counts, last, float64(base)/1e6, float64(growth)/1e6)
	if counts[-1] > 0 {
		t.Errorf("%d slow sockets still open after 10 s", counts[-1])
	}
	for status, n := range counts {
		if status > 0 && status != http.StatusRequestTimeout && status != http.StatusServiceUnavailable {
			t.Errorf("%d sockets answered %d, want 408 (too slow) or 503 (over the anonymous budget)", n, status)
		}
	}
	if counts[http.StatusRequestTimeout] == 0 {
		t.Error("no slow body was cut with 408")
	}
	if last > 5*time.Second {
		t.Errorf("the last slow socket was cut after %v; grace is %v", last, grace)
	}
	if limit := int64(128 << 20); growth > limit {
		t.Errorf("live heap grew by %.1f MB with %d slow anonymous bodies; the bound is %.1f MB", float64(growth)/1e6, sockets, float64(limit)/1e6)
	}
	// Every request gave its charge back.
	deadline := time.Now().Add(5 * time.Second)
	for api.AnonymousBodyBytes(s.API) != 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := api.AnonymousBodyBytes(s.API); n != 0 {
		t.Errorf("%d bytes still charged to the anonymous body budget", n)
	}
	// The node still serves everyone, anonymous bodies included.
	res, body := s.Do(t, http.MethodPost, "/api/v1/posts", map[string]any{"title": "after"}, nil)
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("create after the slow sockets: %d %s", res.StatusCode, body)
	}
}

// TestBodyRateKeepsHonestClients: a body that arrives in pieces faster
// than the minimum rate is read whole; one that stalls longer than the
// grace period is a 408 in the error envelope; and requests without a
// body (the SSE and WebSocket streams) live well past the grace period.
func TestBodyRateKeepsHonestClients(t *testing.T) {
	t.Parallel()
	// A grace of a second: an honest client that the scheduler of a busy
	// test machine holds back for a moment must not be cut.
	const grace = time.Second
	s := apitest.Start(t, apitest.Options{BodyMinRate: 4 << 10, BodyGrace: grace})
	s.CreateCollection(t, public(coll("posts", "base", []map[string]any{f("title", "text")})))

	t.Run("a body in pieces above the rate", func(t *testing.T) {
		body := `{"title":"` + strings.Repeat("p", 8<<10) + `"}`
		conn := rawBody(t, s, http.MethodPost, "/api/v1/posts", int64(len(body)), nil)
		for i := 0; i < len(body); i += 1 << 10 {
			if _, err := conn.Write([]byte(body[i:min(i+1<<10, len(body))])); err != nil {
				t.Fatal(err)
			}
			time.Sleep(100 * time.Millisecond) // 10 KiB/s, over 1 s: longer than the grace
		}
		if status, b, err := rawAnswer(conn, 5*time.Second); err != nil || status != http.StatusCreated {
			t.Fatalf("answer %d %s %v, want 201", status, b, err)
		}
	})
	t.Run("a stalled body", func(t *testing.T) {
		conn := rawBody(t, s, http.MethodPost, "/api/v1/posts", 1<<10, nil)
		if _, err := conn.Write([]byte(`{"title":"st`)); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		status, b, err := rawAnswer(conn, 5*time.Second)
		if err != nil || status != http.StatusRequestTimeout || !strings.Contains(b, `"code":408`) {
			t.Fatalf("answer %d %s %v, want 408", status, b, err)
		}
		if d := time.Since(start); d < grace || d > grace+2*time.Second {
			t.Errorf("cut after %v, grace %v", d, grace)
		}
	})
	t.Run("a stalled chunked body", func(t *testing.T) {
		conn := rawBody(t, s, http.MethodPost, "/api/v1/posts", -1, nil)
		if _, err := conn.Write([]byte("5\r\n{\"tit\r\n")); err != nil {
			t.Fatal(err)
		}
		if status, b, err := rawAnswer(conn, 5*time.Second); err != nil || status != http.StatusRequestTimeout {
			t.Fatalf("answer %d %s %v, want 408", status, b, err)
		}
	})
	t.Run("streams outlive the grace period", func(t *testing.T) {
		sse := openSSE(t, s, "", nil)
		if res, b := s.Do(t, http.MethodPost, "/api/v1/realtime", map[string]any{"clientId": sse.clientID, "topics": []string{"posts"}}, nil); res.StatusCode != http.StatusOK {
			t.Fatalf("subscribe: %d %s", res.StatusCode, b)
		}
		ws := dialWS(t, s, "", nil)
		if m := ws.ask(map[string]any{"type": "subscribe", "topics": []string{"posts"}}); m["type"] != "subscribed" {
			t.Fatalf("ws subscribe: %v", m)
		}
		time.Sleep(5 * grace / 2)
		s.CreateRecord(t, "posts", map[string]any{"title": "late"})
		if got, _ := sse.events(1); got[0] != "create:posts:late" {
			t.Errorf("SSE event %v", got)
		}
		if got := ws.events(1); got[0] != "create:posts:late" {
			t.Errorf("WebSocket event %v", got)
		}
	})
}
