package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"sort"
	"strings"
	"testing"

	"svcd/api/apitest"
)

// presenceKeys sums a presence-state (or the GET endpoint's data) up as
// "key=conn1,conn2" entries, sorted, with the metas' states checked to be
// objects.
func presenceKeys(t *testing.T, state any) []string {
	t.Helper()
	st, ok := state.(map[string]any)
	if !ok {
		t.Fatalf("state %v is not an object", state)
	}
	var out []string
	for key, v := range st {
		metas, _ := v.([]any)
		var conns []string
		for _, m := range metas {
			meta := m.(map[string]any)
			if meta["key"] != key || meta["conn_id"] == "" || meta["online_at"] == nil {
				t.Fatalf("meta %v under key %q", meta, key)
			}
			conns = append(conns, meta["conn_id"].(string))
		}
		out = append(out, key+"="+strings.Join(conns, ","))
	}
	sort.Strings(out)
	return out
}

// presenceEvent sums a presence message up as "event:key".
func presenceEvent(t *testing.T, m map[string]any) string {
	t.Helper()
	if m["type"] != "presence" || m["channel"] == "" {
		t.Fatalf("got %v, want a presence event", m)
	}
	meta := m["meta"].(map[string]any)
	return fmt.Sprintf("%s:%s", m["event"], meta["key"])
}

// keyConns is the connections listed under key in presenceKeys' output
// ("" when the key is absent).
func keyConns(entries []string, key string) string {
	for _, e := range entries {
		if k, conns, _ := strings.Cut(e, "="); k == key {
			return conns
		}
	}
	return ""
}

func hasKey(entries []string, key string) bool { return keyConns(entries, key) != "" }

func getPresence(t *testing.T, s *apitest.Server, channel string) []string {
	t.Helper()
	res, err := http.Get(s.URL + "/api/v1/realtime/presence/" + url.PathEscape(channel))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body struct {
		Data any `json:"data"`
	}
	if res.StatusCode != http.StatusOK || json.NewDecoder(res.Body).Decode(&body) != nil {
		t.Fatalf("GET presence: %d", res.StatusCode)
	}
	return presenceKeys(t, body.Data)
}

func TestRealtimePresence(t *testing.T) {
	t.Parallel()
	s := rtServer(t)
	const ch = "room 1/lobby"

	// An observer sees the empty channel, then everyone else's events.
	obs := dialWS(t, s, "", nil)
	if m := obs.ask(map[string]any{"type": "presence-state", "channel": ch}); m["type"] != "presence-state" || m["channel"] != ch || len(presenceKeys(t, m["state"])) != 0 {
		t.Fatalf("observe: %v", m)
	}

	// An anonymous client's key defaults to its connection id; its
	// answer is the state, itself included.
	anon := dialWS(t, s, "", nil)
	m := anon.ask(map[string]any{"type": "presence-track", "channel": ch, "state": map[string]any{"typing": false}})
	if m["type"] != "presence-state" || len(presenceKeys(t, m["state"])) != 1 {
		t.Fatalf("track: %v", m)
	}
	metas := m["state"].(map[string]any)
	var anonKey string
	for k := range metas {
		anonKey = k
	}
	meta := metas[anonKey].([]any)[0].(map[string]any)
	if meta["conn_id"] != anonKey || meta["identity"] != nil || !reflect.DeepEqual(meta["state"], map[string]any{"typing": false}) {
		t.Fatalf("anonymous meta %v", meta)
	}
	if got := presenceEvent(t, obs.read()); got != "join:"+anonKey {
		t.Fatalf("observer got %s", got)
	}

	// A user's key defaults to the user id; identity is the server's,
	// whatever the client sends.
	alice := dialWS(t, s, "", nil)
	alice.ask(map[string]any{"type": "auth", "token": "user-alice"})
	m = alice.ask(map[string]any{"type": "presence-track", "channel": ch, "state": map[string]any{"n": 1}, "identity": map[string]any{"id": "root", "type": "admin"}})
	if got := presenceKeys(t, m["state"]); len(got) != 2 || !hasKey(got, "alice") || !hasKey(got, anonKey) {
		t.Fatalf("alice's track: %v", got)
	}
	ev := obs.read()
	if presenceEvent(t, ev) != "join:alice" || !reflect.DeepEqual(ev["meta"].(map[string]any)["identity"], map[string]any{"id": "alice", "type": "user"}) {
		t.Fatalf("join of alice: %v", ev)
	}
	if got := presenceEvent(t, anon.read()); got != "join:alice" {
		t.Fatalf("a tracker observes too: %s", got)
	}

	// Tracking again updates, keeping online_at; the tracker gets the
	// state, not its own event.
	alice.ask(map[string]any{"type": "presence-track", "channel": ch, "state": map[string]any{"n": 2}})
	ev = obs.read()
	if presenceEvent(t, ev) != "update:alice" || ev["meta"].(map[string]any)["state"].(map[string]any)["n"] != float64(2) {
		t.Fatalf("update: %v", ev)
	}
	anon.read() // its update too

	// The same user on a second connection is a second meta under the
	// same key; an explicit key is kept.
	alice2 := dialWS(t, s, "", nil)
	alice2.ask(map[string]any{"type": "auth", "token": "user-alice"})
	alice2.ask(map[string]any{"type": "presence-track", "channel": ch, "state": nil})
	if got := presenceEvent(t, obs.read()); got != "join:alice" {
		t.Fatalf("second alice: %s", got)
	}
	anon.read()
	alice.read()
	bob := dialWS(t, s, "", nil)
	bob.ask(map[string]any{"type": "presence-track", "channel": ch, "key": "bob-desk", "state": map[string]any{}})
	for _, w := range []*wsClient{obs, anon, alice, alice2} {
		if got := presenceEvent(t, w.read()); got != "join:bob-desk" {
			t.Fatalf("bob: %s", got)
		}
	}
	got := getPresence(t, s, ch)
	if len(got) != 3 || len(strings.Split(keyConns(got, "alice"), ",")) != 2 || !hasKey(got, "bob-desk") {
		t.Fatalf("GET presence: %v", got)
	}

	// Untrack: a leave for the others; the client still observes.
	if m := bob.ask(map[string]any{"type": "presence-untrack", "channel": ch}); m["type"] != "presence-state" || len(presenceKeys(t, m["state"])) != 2 {
		t.Fatalf("untrack: %v", m)
	}
	for _, w := range []*wsClient{obs, anon, alice, alice2} {
		if got := presenceEvent(t, w.read()); got != "leave:bob-desk" {
			t.Fatalf("bob's leave: %s", got)
		}
	}
	// A closed connection leaves.
	alice2.c.CloseNow()
	for _, w := range []*wsClient{obs, anon, alice, bob} {
		if got := presenceEvent(t, w.read()); got != "leave:alice" {
			t.Fatalf("alice2's leave: %s", got)
		}
	}
	if got := getPresence(t, s, ch); len(got) != 2 || strings.Contains(keyConns(got, "alice"), ",") || !hasKey(got, anonKey) {
		t.Fatalf("after leaves: %v", got)
	}
	// Other channels are not told.
	if m := bob.ask(map[string]any{"type": "presence-track", "channel": "elsewhere", "state": map[string]any{}}); len(presenceKeys(t, m["state"])) != 1 {
		t.Fatalf("elsewhere: %v", m)
	}
	if got := getPresence(t, s, "nobody here"); len(got) != 0 {
		t.Fatalf("empty channel: %v", got)
	}
	obs.quiet()
}

func TestRealtimePresenceErrors(t *testing.T) {
	t.Parallel()
	s := rtServer(t)
	w := dialWS(t, s, "", nil)
	for _, tc := range []struct {
		name string
		msg  any
		code string
	}{
		{"no channel", map[string]any{"type": "presence-track", "state": map[string]any{}}, "invalid_message"},
		{"no channel to observe", map[string]any{"type": "presence-state"}, "invalid_message"},
		{"no channel to untrack", map[string]any{"type": "presence-untrack"}, "invalid_message"},
		{"state over 4 KB", map[string]any{"type": "presence-track", "channel": "c", "state": map[string]any{"s": strings.Repeat("x", 4100)}}, "too_large"},
		{"channel too long", map[string]any{"type": "presence-state", "channel": strings.Repeat("c", 1025)}, "too_large"},
		{"key too long", map[string]any{"type": "presence-track", "channel": "c", "key": strings.Repeat("k", 257)}, "too_large"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w.t = t
			wantErr(t, w.ask(tc.msg), tc.code)
		})
	}
	w.t = t
	// A state of exactly 4 KB is accepted.
	state := `{"s":"` + strings.Repeat("x", 4096-8) + `"}`
	if m := w.ask(map[string]any{"type": "presence-track", "channel": "c", "state": json.RawMessage(state)}); m["type"] != "presence-state" {
		t.Fatalf("4 KB state: %v", m)
	}
	// At most 100 channels per connection.
	for i := 1; i < 100; i++ {
		if m := w.ask(map[string]any{"type": "presence-state", "channel": fmt.Sprint("ch", i)}); m["type"] != "presence-state" {
			t.Fatalf("channel %d: %v", i, m)
		}
	}
	wantErr(t, w.ask(map[string]any{"type": "presence-state", "channel": "one too many"}), "too_large")
	if got := getPresence(t, s, "c"); len(got) != 1 {
		t.Fatalf("failed messages changed the presence: %v", got)
	}
	// The GET endpoint applies the same channel limit.
	if res, _ := s.Do(t, http.MethodGet, "/api/v1/realtime/presence/"+strings.Repeat("c", 1025), nil, nil); res.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("GET of a 1025-byte channel: %d", res.StatusCode)
	}
}
