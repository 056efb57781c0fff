package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"svcd/api/apitest"
)

// The realtime tests run against one node per test function: a real
// WebSocket client (coder/websocket) and SSE read with net/http.

// rtServer starts a node with users simulated as "user-<id>" tokens and
// three collections: posts (public, title and n), mine (view rule: owner
// is the caller) and locked (admin only).
func rtServer(t *testing.T) *apitest.Server {
	t.Helper()
	return rtServerOpts(t, apitest.Options{})
}

// rtServerOpts is rtServer with opts (as startWithUsersOpts).
func rtServerOpts(t *testing.T, opts apitest.Options) *apitest.Server {
	t.Helper()
	s := startWithUsersOpts(t, opts)
	s.CreateCollection(t, public(coll("posts", "base", []map[string]any{f("title", "text"), f("n", "number")})))
	s.CreateCollection(t, coll("mine", "base", []map[string]any{f("owner", "text")},
		"view_rule", "owner = @request.auth.id", "create_rule", ""))
	s.CreateCollection(t, coll("locked", "base", []map[string]any{f("title", "text")}))
	return s
}

type wsClient struct {
	t *testing.T
	c *websocket.Conn
}

func wsURL(s *apitest.Server, query string) string {
	u := "ws" + strings.TrimPrefix(s.URL, "http") + "/realtime"
	if query != "" {
		u += "?" + query
	}
	return u
}

// dialWS opens /realtime and reads the connected message.
func dialWS(t *testing.T, s *apitest.Server, query string, headers map[string]string) *wsClient {
	t.Helper()
	h := http.Header{}
	for k, v := range headers {
		h.Set(k, v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, res, err := websocket.Dial(ctx, wsURL(s, query), &websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, res)
	}
	t.Cleanup(func() { c.CloseNow() })
	w := &wsClient{t: t, c: c}
	if m := w.read(); m["type"] != "connected" || m["clientId"] == "" {
		t.Fatalf("first message %v", m)
	}
	return w
}

func (w *wsClient) send(v any) {
	w.t.Helper()
	b, _ := json.Marshal(v)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := w.c.Write(ctx, websocket.MessageText, b); err != nil {
		w.t.Fatalf("write: %v", err)
	}
}

func (w *wsClient) readWithin(d time.Duration) (map[string]any, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	_, b, err := w.c.Read(ctx)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		w.t.Fatalf("frame %s: %v", b, err)
	}
	return m, nil
}

func (w *wsClient) read() map[string]any {
	w.t.Helper()
	m, err := w.readWithin(5 * time.Second)
	if err != nil {
		w.t.Fatalf("read: %v", err)
	}
	return m
}

// ask sends v and returns the answer.
func (w *wsClient) ask(v any) map[string]any {
	w.t.Helper()
	w.send(v)
	return w.read()
}

// quiet fails when a message arrives within a short time. The connection
// is unusable afterwards (the read was cancelled): call it last.
func (w *wsClient) quiet() {
	w.t.Helper()
	if m, err := w.readWithin(150 * time.Millisecond); err == nil {
		w.t.Fatalf("unexpected message %v", m)
	}
}

// events reads n messages and sums them up as "type:collection:detail".
func (w *wsClient) events(n int) []string {
	w.t.Helper()
	var out []string
	for range n {
		out = append(out, summary(w.read()))
	}
	return out
}

func summary(m map[string]any) string {
	switch m["type"] {
	case "create", "update":
		r, _ := m["record"].(map[string]any)
		detail := r["title"]
		if detail == nil {
			detail = r["owner"]
		}
		return fmt.Sprintf("%s:%s:%v", m["type"], m["collection"], detail)
	case "delete":
		return fmt.Sprintf("delete:%s", m["collection"])
	case "error":
		return "error:" + m["code"].(string)
	}
	return fmt.Sprint(m["type"])
}

func wantErr(t *testing.T, m map[string]any, code string) {
	t.Helper()
	if m["type"] != "error" || m["code"] != code || m["message"] == "" {
		t.Fatalf("got %v, want error %s", m, code)
	}
}

func topicsOf(m map[string]any) []string {
	var out []string
	l, _ := m["topics"].([]any)
	for _, v := range l {
		out = append(out, v.(string))
	}
	return out
}

func TestRealtimeWSMessages(t *testing.T) {
	t.Parallel()
	s := rtServer(t)
	w := dialWS(t, s, "", nil)
	if m := w.ask(map[string]any{"type": "list-subs"}); m["type"] != "subs" || len(topicsOf(m)) != 0 || m["topics"] == nil {
		t.Fatalf("list-subs: %v", m)
	}
	m := w.ask(map[string]any{"type": "subscribe", "topics": []string{" Posts", "POSTS.delete", "*.Delete", "posts/abc", "*"}})
	if want := []string{"posts", "posts.delete", "*.delete", "posts/abc", "*"}; m["type"] != "subscribed" || !reflect.DeepEqual(topicsOf(m), want) {
		t.Fatalf("subscribe: %v", m)
	}
	if m := w.ask(map[string]any{"type": "unsubscribe", "topics": []string{"*"}}); m["type"] != "unsubscribed" || !reflect.DeepEqual(topicsOf(m), []string{"*"}) {
		t.Fatalf("unsubscribe: %v", m)
	}
	if m := w.ask(map[string]any{"type": "list-subs"}); !reflect.DeepEqual(topicsOf(m), []string{"posts", "posts.delete", "*.delete", "posts/abc"}) {
		t.Fatalf("list-subs: %v", m)
	}
	for _, tc := range []struct {
		name string
		msg  any
		code string
	}{
		{"unknown collection", map[string]any{"type": "subscribe", "topics": []string{"posts", "nope"}}, "invalid_topics"},
		{"unknown action", map[string]any{"type": "subscribe", "topics": []string{"posts.upsert"}}, "invalid_topics"},
		{"no topics", map[string]any{"type": "subscribe", "topics": []string{}}, "invalid_topics"},
		{"bad filter", map[string]any{"type": "subscribe", "topics": []string{"posts"}, "filter": "n >"}, "invalid_filter"},
		{"filter too long", map[string]any{"type": "subscribe", "topics": []string{"posts"}, "filter": "title = '" + strings.Repeat("x", 4100) + "'"}, "too_large"},
		{"too many subscriptions", map[string]any{"type": "subscribe", "topics": manyTopics(101)}, "too_large"},
		{"message too large", map[string]any{"type": "list-subs", "pad": strings.Repeat("x", 17<<10)}, "too_large"},
		{"not JSON", "just text", "invalid_message"},
		{"unknown type", map[string]any{"type": "hello"}, "invalid_message"},
		{"bad token", map[string]any{"type": "auth", "token": "garbage"}, "unauthorized"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w.t = t
			wantErr(t, w.ask(tc.msg), tc.code)
		})
	}
	w.t = t
	if m := w.ask(map[string]any{"type": "list-subs"}); len(topicsOf(m)) != 4 {
		t.Fatalf("failed subscribes changed the subscriptions: %v", m)
	}
	if m := w.ask(map[string]any{"type": "auth", "token": "user-alice"}); m["type"] != "authed" || !reflect.DeepEqual(m["identity"], map[string]any{"id": "alice", "type": "user"}) {
		t.Fatalf("auth: %v", m)
	}
	if m := w.ask(map[string]any{"type": "auth", "token": s.AdminToken(t)}); m["type"] != "authed" || m["identity"].(map[string]any)["type"] != "admin" {
		t.Fatalf("auth admin: %v", m)
	}
	if m := w.ask(map[string]any{"type": "auth", "token": ""}); m["type"] != "authed" || m["identity"] != nil {
		t.Fatalf("auth with no token: %v", m)
	}
}

func manyTopics(n int) []string {
	out := []string{"posts"}
	for i := 1; i < n; i++ {
		out = append(out, fmt.Sprintf("posts/r%d", i))
	}
	return out
}

func TestRealtimeWSTopicsFiltersRules(t *testing.T) {
	t.Parallel()
	s := rtServer(t)
	sub := func(headers map[string]string, topics []string, filter string) *wsClient {
		w := dialWS(t, s, "", headers)
		if m := w.ask(map[string]any{"type": "subscribe", "topics": topics, "filter": filter}); m["type"] != "subscribed" {
			t.Fatalf("subscribe %v: %v", topics, m)
		}
		return w
	}
	p := s.CreateRecord(t, "posts", map[string]any{"title": "p0", "n": 1})
	pid := p["id"].(string)
	admin := s.AdminHeaders(t, nil)
	conns := map[string]*wsClient{
		"collection":   sub(nil, []string{"posts"}, ""),
		"record":       sub(nil, []string{"posts/" + pid}, ""),
		"action":       sub(nil, []string{"posts.update"}, ""),
		"all":          sub(nil, []string{"*"}, ""),
		"all deletes":  sub(nil, []string{"*.delete"}, ""),
		"filter":       sub(nil, []string{"posts"}, "n > 5"),
		"rule anon":    sub(nil, []string{"mine", "locked"}, ""),
		"rule alice":   sub(userHeaders("alice"), []string{"mine"}, ""),
		"admin filter": sub(admin, []string{"mine"}, "owner = 'bob'"),
		"admin":        sub(admin, []string{"locked"}, ""),
	}
	// Filters are per topic.
	if m := conns["admin filter"].ask(map[string]any{"type": "subscribe", "topics": []string{"locked"}, "filter": "title = 'other'"}); m["type"] != "subscribed" {
		t.Fatalf("subscribe: %v", m)
	}
	// An anonymous client that authenticates as bob sees bob's records.
	bob := sub(nil, []string{"mine"}, "")
	if m := bob.ask(map[string]any{"type": "auth", "token": "user-bob"}); m["type"] != "authed" {
		t.Fatalf("auth: %v", m)
	}
	conns["auth switch"] = bob

	s.MustAdmin(t, http.StatusOK, http.MethodPatch, "/api/v1/posts/"+pid, map[string]any{"title": "p1"})
	s.CreateRecord(t, "posts", map[string]any{"title": "p2", "n": 9})
	s.MustAdmin(t, http.StatusNoContent, http.MethodDelete, "/api/v1/posts/"+pid, nil)
	s.CreateRecord(t, "mine", map[string]any{"owner": "alice"})
	s.CreateRecord(t, "mine", map[string]any{"owner": "bob"})
	s.CreateRecord(t, "locked", map[string]any{"title": "l1"})

	want := map[string][]string{
		"collection":   {"update:posts:p1", "create:posts:p2", "delete:posts"},
		"record":       {"update:posts:p1", "delete:posts"},
		"action":       {"update:posts:p1"},
		"all":          {"update:posts:p1", "create:posts:p2", "delete:posts"},
		"all deletes":  {"delete:posts"},
		"filter":       {"create:posts:p2"},
		"rule anon":    nil,
		"rule alice":   {"create:mine:alice"},
		"admin filter": {"create:mine:bob"},
		"admin":        {"create:locked:l1"},
		"auth switch":  {"create:mine:bob"},
	}
	for name, w := range conns {
		t.Run(name, func(t *testing.T) {
			w.t = t
			if got := w.events(len(want[name])); !reflect.DeepEqual(got, want[name]) {
				t.Fatalf("got %v, want %v", got, want[name])
			}
			w.quiet()
		})
	}
}

// Hidden fields: only admins see them in records and may filter on them.
func TestRealtimeHiddenFields(t *testing.T) {
	t.Parallel()
	s := startWithUsers(t)
	s.CreateCollection(t, public(coll("profiles", "base", []map[string]any{f("title", "text"), f("code", "text", "hidden", true)})))
	sub := func(headers map[string]string, filter string) *wsClient {
		w := dialWS(t, s, "", headers)
		if m := w.ask(map[string]any{"type": "subscribe", "topics": []string{"profiles"}, "filter": filter}); m["type"] != "subscribed" {
			t.Fatalf("subscribe: %v", m)
		}
		return w
	}
	anon, anonFilter := sub(nil, ""), sub(nil, "code = 'x'")
	admin, adminFilter := sub(s.AdminHeaders(t, nil), ""), sub(s.AdminHeaders(t, nil), "code = 'x'")
	s.CreateRecord(t, "profiles", map[string]any{"title": "t", "code": "x"})
	if r := anon.read()["record"].(map[string]any); r["title"] != "t" || r["code"] != nil {
		t.Fatalf("anonymous record %v", r)
	}
	if r := admin.read()["record"].(map[string]any); r["code"] != "x" {
		t.Fatalf("admin record %v", r)
	}
	if r := adminFilter.read()["record"].(map[string]any); r["code"] != "x" {
		t.Fatalf("admin filtered record %v", r)
	}
	anonFilter.quiet()
}

// A view rule that reads a relation is checked by the database.
func TestRealtimeRelationRule(t *testing.T) {
	t.Parallel()
	s := startWithUsers(t)
	s.CreateCollection(t, public(coll("boards", "base", []map[string]any{f("owner", "text")})))
	s.CreateCollection(t, coll("cards", "base", []map[string]any{f("title", "text"), f("board", "relation", "collection", "boards")},
		"view_rule", "board.owner = @request.auth.id", "create_rule", ""))
	alice := s.CreateRecord(t, "boards", map[string]any{"owner": "alice"})["id"].(string)
	bob := s.CreateRecord(t, "boards", map[string]any{"owner": "bob"})["id"].(string)
	w := dialWS(t, s, "", userHeaders("alice"))
	if m := w.ask(map[string]any{"type": "subscribe", "topics": []string{"cards"}}); m["type"] != "subscribed" {
		t.Fatalf("subscribe: %v", m)
	}
	s.CreateRecord(t, "cards", map[string]any{"title": "bob's", "board": bob})
	s.CreateRecord(t, "cards", map[string]any{"title": "alice's", "board": alice})
	if got := w.events(1); !reflect.DeepEqual(got, []string{"create:cards:alice's"}) {
		t.Fatalf("events %v", got)
	}
	w.quiet()
}
