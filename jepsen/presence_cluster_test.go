package jepsen_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"svcd/jepsen/harness"
)

// Presence across real nodes (issue 7): presence is not in the log but
// gossiped over memberlist; a presence tracked on one node shows on the
// others, and leaves everywhere when its node is killed.

// presenceWait bounds how long a presence change may take to reach
// another node (gossip delta), and presenceDeathWait how long the others
// take to notice a killed node (memberlist probes and suspicion).
const (
	presenceWait      = 10 * time.Second
	presenceDeathWait = 20 * time.Second
)

// presClient is a WebSocket client recording the presence messages it
// gets.
type presClient struct {
	t    *testing.T
	node string
	ws   *websocket.Conn
	mu   sync.Mutex
	msgs []map[string]any
	err  error
}

func dialPresence(t *testing.T, nd *harness.Node) *presClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	u := "ws" + strings.TrimPrefix(nd.URL(), "http") + "/realtime"
	ws, _, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPClient: &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}})
	if err != nil {
		t.Fatalf("%s: dial: %v", nd.Name, err)
	}
	c := &presClient{t: t, node: nd.Name, ws: ws}
	t.Cleanup(func() { ws.CloseNow() })
	go func() {
		for {
			_, b, err := ws.Read(context.Background())
			c.mu.Lock()
			if err != nil {
				c.err = err
				c.mu.Unlock()
				return
			}
			var m map[string]any
			_ = json.Unmarshal(b, &m)
			c.msgs = append(c.msgs, m)
			c.mu.Unlock()
		}
	}()
	return c
}

func (c *presClient) send(v any) {
	c.t.Helper()
	b, _ := json.Marshal(v)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.ws.Write(ctx, websocket.MessageText, b); err != nil {
		c.t.Fatalf("%s: write: %v", c.node, err)
	}
}

// events sums the presence events received up as "event:key".
func (c *presClient) events() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, m := range c.msgs {
		if m["type"] == "presence" {
			meta, _ := m["meta"].(map[string]any)
			out = append(out, fmt.Sprintf("%s:%v", m["event"], meta["key"]))
		}
	}
	return out
}

// waitEvent waits until the client got the event ("join:alice").
func (c *presClient) waitEvent(want string, timeout time.Duration) time.Duration {
	c.t.Helper()
	start := time.Now()
	for !slices.Contains(c.events(), want) {
		if time.Since(start) > timeout {
			c.t.Fatalf("%s: no %s within %s; events %v", c.node, want, timeout, c.events())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Since(start)
}

// presenceOf reads GET /api/v1/realtime/presence/{channel} as sorted
// "key*metas" entries.
func presenceOf(nd *harness.Node, channel string) ([]string, error) {
	res, err := http.Get(nd.URL() + "/api/v1/realtime/presence/" + url.PathEscape(channel))
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	var body struct {
		Data map[string][]struct {
			ConnID   string         `json:"conn_id"`
			Identity map[string]any `json:"identity"`
		} `json:"data"`
	}
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil || res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: presence: %d %v", nd.Name, res.StatusCode, err)
	}
	var out []string
	for k, metas := range body.Data {
		out = append(out, fmt.Sprintf("%s*%d", k, len(metas)))
	}
	sort.Strings(out)
	return out, nil
}

// waitPresence waits until every node in nodes shows want on channel.
func waitPresence(t *testing.T, nodes []*harness.Node, channel string, want []string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for _, nd := range nodes {
		for {
			got, err := presenceOf(nd, channel)
			if err == nil && slices.Equal(got, want) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s shows %v (%v) on %q, want %v", nd.Name, got, err, channel, want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// TestPresenceAcrossNodes: a presence tracked on n1 shows on n2 (as an
// event to an observer) and n3 (through GET); when n1 is SIGKILLed it
// leaves everywhere within seconds; the client reconnecting to n2 with
// its key is back under the same key, once; n1 restarted brings no ghost.
func TestPresenceAcrossNodes(t *testing.T) {
	c := startCluster(t, 3)
	nodes := c.Nodes()
	n1, n2, n3 := nodes[0], nodes[1], nodes[2]
	const ch = "lobby"

	observer := dialPresence(t, n2)
	observer.send(map[string]any{"type": "presence-state", "channel": ch})
	alice := dialPresence(t, n1)
	alice.send(map[string]any{"type": "presence-track", "channel": ch, "key": "alice", "state": map[string]any{"on": "n1"}})
	took := observer.waitEvent("join:alice", presenceWait)
	t.Logf("n1's join reached an observer on n2 in %s", took.Round(time.Millisecond))
	carol := dialPresence(t, n3)
	carol.send(map[string]any{"type": "auth", "token": ""})
	carol.send(map[string]any{"type": "presence-track", "channel": ch, "key": "carol", "state": map[string]any{"on": "n3"}})
	observer.waitEvent("join:carol", presenceWait)
	alice.waitEvent("join:carol", presenceWait)
	waitPresence(t, nodes, ch, []string{"alice*1", "carol*1"}, presenceWait)

	// An update travels too.
	alice.send(map[string]any{"type": "presence-track", "channel": ch, "key": "alice", "state": map[string]any{"on": "n1", "typing": true}})
	observer.waitEvent("update:alice", presenceWait)

	c.Kill(t, n1.Name)
	killed := time.Now()
	took = observer.waitEvent("leave:alice", presenceDeathWait)
	t.Logf("n1 SIGKILLed: its presence left n2 after %s", took.Round(time.Millisecond))
	waitPresence(t, []*harness.Node{n2, n3}, ch, []string{"carol*1"}, presenceDeathWait-time.Since(killed))
	if slices.Contains(observer.events(), "leave:carol") {
		t.Fatalf("carol (on n3) left with n1: %v", observer.events())
	}

	// The client reconnects to n2 and tracks under its key again.
	alice2 := dialPresence(t, n2)
	alice2.send(map[string]any{"type": "presence-track", "channel": ch, "key": "alice", "state": map[string]any{"on": "n2"}})
	carol.waitEvent("join:alice", presenceWait)
	waitPresence(t, []*harness.Node{n2, n3}, ch, []string{"alice*1", "carol*1"}, presenceWait)

	// n1 comes back with nothing of its past life.
	c.Restart(t, n1.Name)
	waitReady(t, c.Node(n1.Name))
	time.Sleep(3 * time.Second) // gossip rejoins and exchanges state
	waitPresence(t, c.Nodes(), ch, []string{"alice*1", "carol*1"}, presenceWait)
	// Closing a connection is a leave everywhere.
	carol.ws.Close(websocket.StatusNormalClosure, "bye")
	observer.waitEvent("leave:carol", presenceWait)
	waitPresence(t, c.Nodes(), ch, []string{"alice*1"}, presenceWait)
}
