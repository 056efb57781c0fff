package api_test

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/coder/websocket"

	"svcd/api/apitest"
	"svcd/realtime"
)

func TestRealtimeWSReplayLimitsOrigin(t *testing.T) {
	t.Parallel()
	clock := newClock()
	s := rtServerOpts(t, apitest.Options{Clock: clock.Now})
	subscribe := func(w *wsClient, extra map[string]any) {
		t := w.t
		t.Helper()
		msg := map[string]any{"type": "subscribe", "topics": []string{"posts"}}
		for k, v := range extra {
			msg[k] = v
		}
		if m := w.ask(msg); m["type"] != "subscribed" {
			t.Fatalf("subscribe: %v", m)
		}
	}
	live := dialWS(t, s, "", nil)
	subscribe(live, nil)
	var ids []string
	for _, title := range []string{"a1", "a2", "a3"} {
		s.CreateRecord(t, "posts", map[string]any{"title": title})
		m := live.read()
		ids = append(ids, m["eventId"].(string))
	}
	var prev uint64
	for _, id := range ids {
		idx, _, ok := realtime.ParseID(id)
		if !ok || idx <= prev {
			t.Fatalf("event ids do not increase: %v", ids)
		}
		prev = idx
	}

	t.Run("partial replay from the query", func(t *testing.T) {
		w := dialWS(t, s, "lastEventId="+ids[0], nil)
		subscribe(w, nil)
		if got := w.events(2); !reflect.DeepEqual(got, []string{"create:posts:a2", "create:posts:a3"}) {
			t.Fatalf("replay %v", got)
		}
		w.quiet()
	})
	t.Run("partial replay from the subscribe message", func(t *testing.T) {
		w := dialWS(t, s, "", nil)
		subscribe(w, map[string]any{"lastEventId": ids[1]})
		if got := w.events(1); !reflect.DeepEqual(got, []string{"create:posts:a3"}) {
			t.Fatalf("replay %v", got)
		}
		w.quiet()
	})
	t.Run("empty replay", func(t *testing.T) {
		w := dialWS(t, s, "lastEventId="+ids[2], nil)
		subscribe(w, nil)
		w.quiet()
	})
	t.Run("malformed id", func(t *testing.T) {
		w := dialWS(t, s, "lastEventId=x", nil)
		wantErr(t, w.read(), "invalid_message")
	})
	t.Run("replay window exceeded", func(t *testing.T) {
		s.MustAdmin(t, http.StatusOK, http.MethodPatch, settingsURL, map[string]any{"realtime.retention_sec": 1})
		clock.Advance(1100 * time.Millisecond)
		s.CreateRecord(t, "posts", map[string]any{"title": "a4"}) // evicts a1..a3
		w := dialWS(t, s, "lastEventId="+ids[0], nil)
		subscribe(w, nil)
		wantErr(t, w.read(), "replay_window_exceeded")
		s.CreateRecord(t, "posts", map[string]any{"title": "a5"})
		if got := w.events(1); !reflect.DeepEqual(got, []string{"create:posts:a5"}) {
			t.Fatalf("live after the window error: %v", got)
		}
		s.MustAdmin(t, http.StatusOK, http.MethodPatch, settingsURL, map[string]any{"realtime.retention_sec": 30})
	})
	t.Run("slow consumer dropped", func(t *testing.T) {
		hub := s.Stack.Realtime
		w := dialWS(t, s, "", nil)
		subscribe(w, nil)
		hub.SetMaxPending(0)
		defer hub.SetMaxPending(1024)
		s.CreateRecord(t, "posts", map[string]any{"title": "x"})
		wantErr(t, w.read(), "slow_consumer")
		if _, err := w.readWithin(5 * time.Second); websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
			t.Fatalf("after the error frame: %v", err)
		}
		if st := hub.Stats(); st.Dropped < 1 {
			t.Fatalf("stats %+v", st)
		}
	})
	t.Run("metrics", func(t *testing.T) {
		out := s.MustAdmin(t, http.StatusOK, http.MethodGet, "/api/v1/_/metrics", nil)
		data := out["data"].(map[string]any)
		for _, k := range []string{"realtime_connections", "realtime_subscriptions", "realtime_dropped_consumers", "realtime_ring_events"} {
			if _, ok := data[k]; !ok {
				t.Errorf("metrics lack %s: %v", k, data)
			}
		}
		if fmt.Sprint(data["realtime_dropped_consumers"]) == "0" {
			t.Errorf("metrics %v", data)
		}
	})
	t.Run("origin", func(t *testing.T) {
		s.MustAdmin(t, http.StatusOK, http.MethodPatch, settingsURL, map[string]any{"cors.origins": "https://good.example, https://other.example"})
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		for origin, ok := range map[string]bool{"https://good.example": true, s.URL: true, "https://evil.example": false} {
			h := http.Header{"Origin": {origin}}
			c, res, err := websocket.Dial(ctx, wsURL(s, ""), &websocket.DialOptions{HTTPHeader: h})
			if ok != (err == nil) {
				t.Errorf("websocket origin %s: %v", origin, err)
			}
			if err == nil {
				c.CloseNow()
			} else if res == nil || res.StatusCode != http.StatusForbidden {
				t.Errorf("websocket origin %s: %v", origin, res)
			}
			if status := sseStatus(t, s, origin); (status == http.StatusOK) != ok {
				t.Errorf("sse origin %s: %d", origin, status)
			}
		}
	})
}
