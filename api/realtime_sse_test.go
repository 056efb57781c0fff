package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"svcd/api/apitest"
)

type sseFrame struct {
	id, event string
	data      map[string]any
}

type sseClient struct {
	t        *testing.T
	clientID string
	frames   chan sseFrame
}

// openSSE opens GET /api/v1/realtime?query and reads the connect frame.
func openSSE(t *testing.T, s *apitest.Server, query string, headers map[string]string) *sseClient {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/api/v1/realtime?"+query, nil)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("open stream: %v", err)
	}
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("open stream: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	c := &sseClient{t: t, frames: make(chan sseFrame, 64)}
	go func() {
		defer close(c.frames)
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		var f sseFrame
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if f.event != "" {
					c.frames <- f
				}
				f = sseFrame{}
			case strings.HasPrefix(line, "id: "):
				f.id = line[4:]
			case strings.HasPrefix(line, "event: "):
				f.event = line[7:]
			case strings.HasPrefix(line, "data: "):
				_ = json.Unmarshal([]byte(line[6:]), &f.data)
			}
		}
	}()
	f := c.next()
	if f.event != "connect" || f.data["clientId"] == "" {
		t.Fatalf("first frame %+v", f)
	}
	c.clientID = f.data["clientId"].(string)
	return c
}

func (c *sseClient) next() sseFrame {
	c.t.Helper()
	select {
	case f, ok := <-c.frames:
		if !ok {
			c.t.Fatal("stream ended")
		}
		return f
	case <-time.After(5 * time.Second):
		c.t.Fatal("no frame within 5 s")
	}
	return sseFrame{}
}

func (c *sseClient) quiet() {
	c.t.Helper()
	select {
	case f, ok := <-c.frames:
		if ok {
			c.t.Fatalf("unexpected frame %+v", f)
		}
	case <-time.After(150 * time.Millisecond):
	}
}

// events reads n frames as "event:title" and checks each carries an id.
func (c *sseClient) events(n int) (out []string, ids []string) {
	c.t.Helper()
	for range n {
		f := c.next()
		if f.event != "error" && f.id == "" {
			c.t.Fatalf("frame without id %+v", f)
		}
		out, ids = append(out, summary(f.data)), append(ids, f.id)
	}
	return out, ids
}

// sseStatus opens a stream with an Origin and returns the status.
func sseStatus(t *testing.T, s *apitest.Server, origin string) int {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/api/v1/realtime", nil)
	req.Header.Set("Origin", origin)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("open stream: %v", err)
	}
	res.Body.Close()
	return res.StatusCode
}

func TestRealtimeSSE(t *testing.T) {
	t.Parallel()
	s := rtServer(t)
	post := func(body any, headers map[string]string) (int, map[string]any) {
		t.Helper()
		res, b := s.Do(t, http.MethodPost, "/api/v1/realtime", body, headers)
		return res.StatusCode, apitest.DecodeMap(t, b)
	}

	c := openSSE(t, s, "", nil)
	status, out := post(map[string]any{"clientId": c.clientID, "topics": []string{"Posts", "mine"}}, nil)
	if status != http.StatusOK || !reflect.DeepEqual(out["data"].(map[string]any)["topics"], []any{"posts", "mine"}) {
		t.Fatalf("subscribe: %d %v", status, out)
	}
	s.CreateRecord(t, "posts", map[string]any{"title": "s1"})
	s.CreateRecord(t, "mine", map[string]any{"owner": "alice"}) // not for anonymous
	got, ids := c.events(1)
	if !reflect.DeepEqual(got, []string{"create:posts:s1"}) {
		t.Fatalf("events %v", got)
	}
	c.quiet()

	t.Run("subscribe errors", func(t *testing.T) {
		for _, tc := range []struct {
			name    string
			body    any
			headers map[string]string
			status  int
			code    string
		}{
			{"invalid topics", map[string]any{"clientId": c.clientID, "topics": []string{"nope"}}, nil, 400, "invalid_topics"},
			{"invalid filter", map[string]any{"clientId": c.clientID, "topics": []string{"posts"}, "filter": "("}, nil, 400, "invalid_filter"},
			{"no client id", map[string]any{"topics": []string{"posts"}}, nil, 400, "invalid_message"},
			{"body too large", map[string]any{"clientId": c.clientID, "filter": strings.Repeat("x", 17<<10)}, nil, 413, "too_large"},
			{"unknown client", map[string]any{"clientId": "nope", "topics": []string{"posts"}}, nil, 404, ""},
		} {
			status, out := post(tc.body, tc.headers)
			if status != tc.status {
				t.Errorf("%s: %d %v", tc.name, status, out)
			}
			if tc.code != "" && (out["details"] == nil || out["details"].(map[string]any)["code"] != tc.code) {
				t.Errorf("%s: %v", tc.name, out)
			}
		}
	})
	t.Run("a stream opened anonymously takes the poster's identity; another identity is refused", func(t *testing.T) {
		a := openSSE(t, s, "", nil)
		if status, out := post(map[string]any{"clientId": a.clientID, "topics": []string{"mine"}}, userHeaders("alice")); status != http.StatusOK {
			t.Fatalf("subscribe: %d %v", status, out)
		}
		if status, _ := post(map[string]any{"clientId": a.clientID, "topics": []string{"mine"}}, userHeaders("bob")); status != http.StatusForbidden {
			t.Fatalf("other identity: %d", status)
		}
		s.CreateRecord(t, "mine", map[string]any{"owner": "bob"})
		s.CreateRecord(t, "mine", map[string]any{"owner": "alice"})
		if got, _ := a.events(1); !reflect.DeepEqual(got, []string{"create:mine:alice"}) {
			t.Fatalf("events %v", got)
		}
		a.quiet()
	})
	t.Run("topics at connect and replay right after it", func(t *testing.T) {
		s.CreateRecord(t, "posts", map[string]any{"title": "s2"})
		s.CreateRecord(t, "posts", map[string]any{"title": "s3"})
		r := openSSE(t, s, "topics=posts,posts.delete&filter="+strings.ReplaceAll("title != 's3'", " ", "%20"), map[string]string{"Last-Event-ID": ids[0]})
		if f := r.next(); f.event != "subscribed" {
			t.Fatalf("frame %+v", f)
		}
		if got, _ := r.events(1); !reflect.DeepEqual(got, []string{"create:posts:s2"}) {
			t.Fatalf("replay %v", got)
		}
		r.quiet()
	})
	t.Run("replay after the first subscribe without topics", func(t *testing.T) {
		r := openSSE(t, s, "lastEventId="+ids[0], nil)
		r.quiet()
		if status, out := post(map[string]any{"clientId": r.clientID, "topics": []string{"posts"}}, nil); status != http.StatusOK {
			t.Fatalf("subscribe: %d %v", status, out)
		}
		if got, _ := r.events(2); !reflect.DeepEqual(got, []string{"create:posts:s2", "create:posts:s3"}) {
			t.Fatalf("replay %v", got)
		}
	})
	t.Run("disconnect", func(t *testing.T) {
		d := openSSE(t, s, "", nil)
		if res, _ := s.Do(t, http.MethodDelete, "/api/v1/realtime/"+d.clientID, nil, nil); res.StatusCode != http.StatusNoContent {
			t.Fatalf("delete: %d", res.StatusCode)
		}
		select {
		case _, ok := <-d.frames:
			if ok {
				t.Fatal("a frame after disconnect")
			}
		case <-time.After(5 * time.Second):
			t.Fatal("stream still open")
		}
		if res, _ := s.Do(t, http.MethodDelete, "/api/v1/realtime/"+d.clientID, nil, nil); res.StatusCode != http.StatusNotFound {
			t.Fatalf("second delete: %d", res.StatusCode)
		}
	})
	t.Run("presence endpoint", func(t *testing.T) {
		if got := getPresence(t, s, "room"); len(got) != 0 {
			t.Fatalf("presence of an empty channel: %v", got)
		}
		res, _ := s.Do(t, http.MethodGet, "/api/v1/realtime/presence/room", nil, map[string]string{"Origin": "https://elsewhere.example"})
		if res.StatusCode != http.StatusForbidden {
			t.Fatalf("presence from a disallowed origin: %d", res.StatusCode)
		}
	})
}
