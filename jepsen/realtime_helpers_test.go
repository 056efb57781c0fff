package jepsen_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"svcd/jepsen/suite"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// Realtime clients for the cluster tests: an SSE reader on plain net/http
// and a WebSocket client on coder/websocket. Both record every record
// event (create, update, delete) they receive, in order, and every error
// frame; neither imports anything of svcd.

// rtEvent is one record event as a subscriber received it.
type rtEvent struct {
	ID       string // the event id: "<raft index>" or "<raft index>.<n>"
	Index    uint64
	Seq      uint32
	Type     string // create, update, delete
	RecordID string
	Node     string // the node it came from
}

// parseRTID splits an event id "<index>" or "<index>.<n>".
var parseRTID = suite.ParseEventID

// rtLess orders event ids as (index, n) pairs.
func rtLess(a, b rtEvent) bool {
	return a.Index < b.Index || (a.Index == b.Index && a.Seq < b.Seq)
}

// rtMessage is the JSON of an event (the SSE data line, a WebSocket
// message).
type rtMessage struct {
	Type       string `json:"type"`
	EventID    string `json:"eventId"`
	Collection string `json:"collection"`
	ID         string `json:"id"` // delete
	Record     *struct {
		ID string `json:"id"`
	} `json:"record"`
	ClientID string   `json:"clientId"`
	Topics   []string `json:"topics"`
	Code     string   `json:"code"`
	Message  string   `json:"message"`
}

// rtSub is one subscriber stream. It is safe for concurrent use.
type rtSub struct {
	node   string
	cancel context.CancelFunc
	ready  chan struct{} // closed once the subscription is in effect
	done   chan struct{} // closed when the stream ends

	mu     sync.Mutex
	events []rtEvent
	errs   []string // error frames and protocol violations
	err    error    // why the stream ended
	wake   chan struct{}
}

func newRTSub(node string, cancel context.CancelFunc) *rtSub {
	return &rtSub{node: node, cancel: cancel, ready: make(chan struct{}), done: make(chan struct{}), wake: make(chan struct{})}
}

// Close ends the stream and waits for its reader.
func (s *rtSub) Close() {
	s.cancel()
	<-s.done
}

// Events are the record events received so far.
func (s *rtSub) Events() []rtEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]rtEvent(nil), s.events...)
}

// Problems are the error frames received and protocol violations seen.
func (s *rtSub) Problems() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.errs...)
}

// Err is why the stream ended (nil while it runs).
func (s *rtSub) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

func (s *rtSub) problem(format string, args ...any) {
	s.mu.Lock()
	s.errs = append(s.errs, fmt.Sprintf(format, args...))
	s.mu.Unlock()
}

func (s *rtSub) finish(err error) {
	s.mu.Lock()
	s.err = err
	s.mu.Unlock()
	close(s.done)
}

// handle records one message; frameID is the SSE id: line ("" for the
// WebSocket).
func (s *rtSub) handle(frameID string, m rtMessage) {
	switch m.Type {
	case "create", "update", "delete":
	case "error":
		s.problem("%s: error frame %s: %s", s.node, m.Code, m.Message)
		return
	case "subscribed":
		select {
		case <-s.ready:
		default:
			close(s.ready)
		}
		return
	default:
		return
	}
	if frameID != "" && frameID != m.EventID {
		s.problem("%s: frame id %q but eventId %q", s.node, frameID, m.EventID)
	}
	idx, seq, ok := parseRTID(m.EventID)
	if !ok {
		s.problem("%s: malformed event id %q", s.node, m.EventID)
		return
	}
	ev := rtEvent{ID: m.EventID, Index: idx, Seq: seq, Type: m.Type, Node: s.node}
	if m.Type == "delete" {
		ev.RecordID = m.ID
	} else if m.Record != nil {
		ev.RecordID = m.Record.ID
	}
	if ev.RecordID == "" {
		s.problem("%s: event %s without a record id", s.node, m.EventID)
	}
	s.mu.Lock()
	s.events = append(s.events, ev)
	close(s.wake)
	s.wake = make(chan struct{})
	s.mu.Unlock()
}

// WaitFor waits until pred holds for the events received, the stream ends
// or timeout passes, and reports whether pred holds.
func (s *rtSub) WaitFor(timeout time.Duration, pred func([]rtEvent) bool) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		ok := pred(s.events)
		wake := s.wake
		s.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-wake:
		case <-s.done:
			s.mu.Lock()
			defer s.mu.Unlock()
			return pred(s.events)
		case <-deadline.C:
			return false
		}
	}
}

// WaitReady waits until the server confirmed the subscription.
func (s *rtSub) WaitReady(timeout time.Duration) error {
	select {
	case <-s.ready:
		return nil
	case <-s.done:
		return fmt.Errorf("%s: stream ended before it was subscribed: %v %v", s.node, s.Err(), s.Problems())
	case <-time.After(timeout):
		return fmt.Errorf("%s: not subscribed within %s", s.node, timeout)
	}
}

// sseSubscribe opens GET /api/v1/realtime?topics=... on baseURL (with
// Last-Event-ID when lastID is set) and reads the stream until it ends.
func sseSubscribe(node, baseURL string, topics []string, lastID string) (*rtSub, error) {
	ctx, cancel := context.WithCancel(context.Background())
	s := newRTSub(node, cancel)
	req, err := http.NewRequestWithContext(ctx, "GET", baseURL+"/api/v1/realtime?topics="+url.QueryEscape(strings.Join(topics, ",")), nil)
	if err != nil {
		cancel()
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	// A client of its own: the stream is long-lived and must not be
	// bounded by a request timeout.
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true, ResponseHeaderTimeout: 5 * time.Second}}
	resp, err := hc.Do(req)
	if err != nil {
		cancel()
		return nil, err
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		cancel()
		return nil, fmt.Errorf("%s: realtime stream: %d %s %s", node, resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	go func() {
		defer resp.Body.Close()
		s.finish(readSSE(resp.Body, s))
	}()
	return s, nil
}

// readSSE parses the event stream: frames end with a blank line; only
// complete frames count.
func readSSE(r io.Reader, s *rtSub) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var id, event string
	var data []string
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return err
		}
		line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
		if line == "" {
			if event != "" || len(data) > 0 {
				var m rtMessage
				if err := json.Unmarshal([]byte(strings.Join(data, "\n")), &m); err != nil {
					s.problem("%s: frame %q with bad data %q: %v", s.node, event, data, err)
				} else {
					if m.Type == "" {
						m.Type = event
					}
					if event != m.Type {
						s.problem("%s: frame event %q carries type %q", s.node, event, m.Type)
					}
					s.handle(id, m)
				}
			}
			id, event, data = "", "", nil
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue // comment (ping)
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "id":
			id = value
		case "event":
			event = value
		case "data":
			data = append(data, value)
		}
	}
}

// wsSubscribe connects to ws://.../realtime (with ?lastEventId when lastID
// is set), subscribes to topics and reads messages until the connection
// ends.
func wsSubscribe(node, baseURL string, topics []string, lastID string) (*rtSub, error) {
	u := "ws" + strings.TrimPrefix(baseURL, "http") + "/realtime"
	if lastID != "" {
		u += "?lastEventId=" + url.QueryEscape(lastID)
	}
	dctx, dcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer dcancel()
	ws, _, err := websocket.Dial(dctx, u, &websocket.DialOptions{HTTPClient: &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}})
	if err != nil {
		return nil, fmt.Errorf("%s: dial %s: %w", node, u, err)
	}
	ws.SetReadLimit(1 << 20)
	ctx, cancel := context.WithCancel(context.Background())
	s := newRTSub(node, cancel)
	var hello rtMessage
	if err := wsRead(dctx, ws, &hello); err != nil || hello.Type != "connected" || hello.ClientID == "" {
		ws.CloseNow()
		cancel()
		return nil, fmt.Errorf("%s: first message %+v, %v; want connected", node, hello, err)
	}
	sub, _ := json.Marshal(map[string]any{"type": "subscribe", "topics": topics})
	if err := ws.Write(dctx, websocket.MessageText, sub); err != nil {
		ws.CloseNow()
		cancel()
		return nil, fmt.Errorf("%s: subscribe: %w", node, err)
	}
	go func() {
		defer ws.CloseNow()
		for {
			var m rtMessage
			if err := wsRead(ctx, ws, &m); err != nil {
				s.finish(err)
				return
			}
			s.handle("", m)
		}
	}()
	return s, nil
}

func wsRead(ctx context.Context, ws *websocket.Conn, m *rtMessage) error {
	typ, b, err := ws.Read(ctx)
	if err != nil {
		return err
	}
	if typ != websocket.MessageText {
		return errors.New("binary message")
	}
	return json.Unmarshal(b, m)
}

// rtSubscribeFunc opens a subscriber stream (sseSubscribe, wsSubscribe).
type rtSubscribeFunc func(node, baseURL string, topics []string, lastID string) (*rtSub, error)
