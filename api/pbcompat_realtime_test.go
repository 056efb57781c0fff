package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"svcd/api/apitest"
)

// pbFrame is one frame of PocketBase's stream (id:, event:, data:).
type pbFrame struct {
	id, event string
	data      map[string]any
}

type pbStreamClient struct {
	t        *testing.T
	clientID string
	frames   chan pbFrame
}

// openPBRealtime opens GET /api/realtime on s and reads PB_CONNECT.
func openPBRealtime(t *testing.T, s *apitest.Server) *pbStreamClient {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/api/realtime", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("open stream: %v", err)
	}
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("open stream: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	c := &pbStreamClient{t: t, frames: make(chan pbFrame, 64)}
	go func() {
		defer close(c.frames)
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		var f pbFrame
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if f.event != "" {
					c.frames <- f
				}
				f = pbFrame{}
			case strings.HasPrefix(line, "id:"):
				f.id = line[3:]
			case strings.HasPrefix(line, "event:"):
				f.event = line[6:]
			case strings.HasPrefix(line, "data:"):
				_ = json.Unmarshal([]byte(line[5:]), &f.data)
			}
		}
	}()
	f := c.next()
	id, _ := f.data["clientId"].(string)
	if f.event != "PB_CONNECT" || id == "" || f.id != id {
		t.Fatalf("first frame %+v", f)
	}
	c.clientID = id
	return c
}

func (c *pbStreamClient) next() pbFrame {
	c.t.Helper()
	select {
	case f, ok := <-c.frames:
		if !ok {
			c.t.Fatal("stream ended")
		}
		return f
	case <-time.After(10 * time.Second):
		c.t.Fatal("no frame within 10 s")
	}
	return pbFrame{}
}

func (c *pbStreamClient) quiet() {
	c.t.Helper()
	select {
	case f, ok := <-c.frames:
		if ok {
			c.t.Fatalf("unexpected frame %+v", f)
		}
	case <-time.After(200 * time.Millisecond):
	}
}

// summary is "event|action|title" of a frame, checking its id.
func (c *pbStreamClient) summary(f pbFrame) string {
	c.t.Helper()
	if f.id != c.clientID {
		c.t.Fatalf("frame id %q, want the client id %q", f.id, c.clientID)
	}
	rec, _ := f.data["record"].(map[string]any)
	return f.event + "|" + str(f.data["action"]) + "|" + str(rec["title"]) + "|" + str(rec["collectionName"])
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// pbSubscribe posts a subscription set to s and returns the status and body.
func pbSubscribe(t *testing.T, s *apitest.Server, clientID string, subs []string, headers map[string]string) (int, map[string]any) {
	t.Helper()
	body := map[string]any{"clientId": clientID, "subscriptions": subs}
	res, b := s.Do(t, http.MethodPost, "/api/realtime", body, headers)
	if len(b) == 0 {
		return res.StatusCode, nil
	}
	return res.StatusCode, apitest.DecodeMap(t, b)
}

// pbOptions is a topic with the SDK's ?options= query.
func pbOptions(topic string, query map[string]any) string {
	b, _ := json.Marshal(map[string]any{"query": query})
	return topic + "?options=" + url.QueryEscape(string(b))
}

func TestPBRealtime(t *testing.T) {
	t.Parallel()
	s := rtServer(t)
	c := openPBRealtime(t, s)
	big := pbOptions("posts/*", map[string]any{"filter": "n > 5", "fields": "id,title"})
	if st, out := pbSubscribe(t, s, c.clientID, []string{"posts/*", big, "mine/*"}, nil); st != http.StatusNoContent {
		t.Fatalf("subscribe: %d %v", st, out)
	}
	s.CreateRecord(t, "posts", map[string]any{"title": "small", "n": 1})
	s.CreateRecord(t, "mine", map[string]any{"owner": "alice"}) // the view rule hides it from a guest
	if got := c.summary(c.next()); got != "posts/*|create|small|posts" {
		t.Fatalf("event %s", got)
	}
	c.quiet()
	rec := s.CreateRecord(t, "posts", map[string]any{"title": "large", "n": 10})
	got := map[string]pbFrame{}
	for range 2 {
		f := c.next()
		got[f.event] = f
	}
	if c.summary(got["posts/*"]) != "posts/*|create|large|posts" {
		t.Fatalf("events %v", got)
	}
	if f := got[big]; c.summary(f) != big+"|create|large|" || len(f.data["record"].(map[string]any)) != 2 {
		t.Fatalf("the filtered subscription's event (fields id,title): %+v", f)
	}
	c.quiet()

	// A delete carries the record as it was.
	id := rec["id"].(string)
	s.MustAdmin(t, http.StatusNoContent, http.MethodDelete, "/api/v1/posts/"+id, nil)
	got = map[string]pbFrame{}
	for range 2 {
		f := c.next()
		got[f.event] = f
	}
	if c.summary(got["posts/*"]) != "posts/*|delete|large|posts" || got["posts/*"].data["record"].(map[string]any)["id"] != id {
		t.Fatalf("delete events %v", got)
	}

	t.Run("a record topic", func(t *testing.T) {
		one := s.CreateRecord(t, "posts", map[string]any{"title": "one", "n": 2})
		if got := c.summary(c.next()); got != "posts/*|create|one|posts" {
			t.Fatalf("event %s", got)
		}
		if st, out := pbSubscribe(t, s, c.clientID, []string{"posts/" + one["id"].(string)}, nil); st != http.StatusNoContent {
			t.Fatalf("subscribe: %d %v", st, out)
		}
		s.CreateRecord(t, "posts", map[string]any{"title": "other", "n": 2})
		s.MustAdmin(t, http.StatusOK, http.MethodPatch, "/api/v1/posts/"+one["id"].(string), map[string]any{"title": "one'"})
		if got := c.summary(c.next()); got != "posts/"+one["id"].(string)+"|update|one'|posts" {
			t.Fatalf("event %s", got)
		}
		c.quiet()
	})

	t.Run("expand", func(t *testing.T) {
		s.CreateCollection(t, public(coll("comments", "base", []map[string]any{f("body", "text"), f("post", "relation", "collection", "posts")})))
		post := s.CreateRecord(t, "posts", map[string]any{"title": "parent", "n": 0})
		x := openPBRealtime(t, s)
		topic := pbOptions("comments/*", map[string]any{"expand": "post"})
		if st, out := pbSubscribe(t, s, x.clientID, []string{topic}, nil); st != http.StatusNoContent {
			t.Fatalf("subscribe: %d %v", st, out)
		}
		s.CreateRecord(t, "comments", map[string]any{"body": "hi", "post": post["id"]})
		fr := x.next()
		rec, _ := fr.data["record"].(map[string]any)
		exp, _ := rec["expand"].(map[string]any)
		parent, _ := exp["post"].(map[string]any)
		if fr.event != topic || rec["body"] != "hi" || parent["title"] != "parent" || parent["collectionName"] != "posts" {
			t.Fatalf("expanded event %+v", fr)
		}
	})

	t.Run("the POST's authorization is the client's", func(t *testing.T) {
		a := openPBRealtime(t, s)
		if st, out := pbSubscribe(t, s, a.clientID, []string{"mine/*"}, userHeaders("alice")); st != http.StatusNoContent {
			t.Fatalf("subscribe as alice: %d %v", st, out)
		}
		s.CreateRecord(t, "mine", map[string]any{"owner": "bob"})
		s.CreateRecord(t, "mine", map[string]any{"owner": "alice"})
		f := a.next()
		if f.event != "mine/*" || f.data["record"].(map[string]any)["owner"] != "alice" {
			t.Fatalf("alice's event %+v", f)
		}
		a.quiet()
		for _, h := range []map[string]string{userHeaders("bob"), nil} {
			st, out := pbSubscribe(t, s, a.clientID, []string{"mine/*"}, h)
			if st != http.StatusForbidden || out["message"] != "The current and the previous request authorization don't match." {
				t.Fatalf("another caller (%v): %d %v", h, st, out)
			}
		}
	})

	t.Run("errors", func(t *testing.T) {
		st, out := pbSubscribe(t, s, "0123456789abcdef", []string{"posts/*"}, nil)
		if st != http.StatusNotFound || out["message"] != "Missing or invalid client id." || out["status"] == nil {
			t.Fatalf("unknown client: %d %v", st, out)
		}
		st, out = pbSubscribe(t, s, "", []string{"posts/*"}, nil)
		if st != http.StatusBadRequest || out["data"].(map[string]any)["clientId"] == nil {
			t.Fatalf("no client id: %d %v", st, out)
		}
		st, out = pbSubscribe(t, s, c.clientID, []string{pbOptions("posts/*", map[string]any{"filter": "("})}, nil)
		if st != http.StatusBadRequest {
			t.Fatalf("a bad filter: %d %v", st, out)
		}
	})
}

// TestPBRealtimeCluster: the stream on one node, the subscription POST on
// a second (as a load balancer may send it), the write on the third: the
// event arrives.
func TestPBRealtimeCluster(t *testing.T) {
	t.Parallel()
	c := apitest.StartCluster(t, 3, apitest.Options{})
	c.AdminToken(t)
	leader := c.Leader(t)
	leader.CreateCollection(t, public(coll("posts", "base", []map[string]any{f("title", "text")})))
	c.Sync(t)
	n1, n2, n3 := c.Nodes[0], c.Nodes[1], c.Nodes[2]
	st := openPBRealtime(t, n1)
	if s, out := pbSubscribe(t, n2, st.clientID, []string{"posts/*"}, nil); s != http.StatusNoContent {
		t.Fatalf("subscribe on another node: %d %v", s, out)
	}
	n3.CreateRecord(t, "posts", map[string]any{"title": "far"})
	if got := st.summary(st.next()); got != "posts/*|create|far|posts" {
		t.Fatalf("event %s", got)
	}
	// An id no member holds is 404 on every node.
	if s, out := pbSubscribe(t, n2, "ffffffff0123", []string{"posts/*"}, nil); s != http.StatusNotFound {
		t.Fatalf("unknown client on another node: %d %v", s, out)
	}
}
