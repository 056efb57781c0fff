package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/coder/websocket"

	"svcd/engine"
	"svcd/realtime"
)

// wsWriteTimeout bounds one frame write: a client that stops reading is
// cut off instead of holding its goroutine.
const wsWriteTimeout = 10 * time.Second

// wsPingInterval is how often an open WebSocket is pinged.
const wsPingInterval = 25 * time.Second

// wsMessage is any client message of SPEC.md's table.
type wsMessage struct {
	Type        string          `json:"type"`
	Token       string          `json:"token"`
	Topics      []string        `json:"topics"`
	Filter      string          `json:"filter"`
	LastEventID string          `json:"lastEventId"`
	Channel     string          `json:"channel"`
	Key         string          `json:"key"`
	State       json.RawMessage `json:"state"`
}

// realtimeWS serves GET /realtime: {type: connected} on open, then client
// messages answered in order, and events as they commit from the first
// subscription on. Query lastEventId resumes after that event (the first
// subscribe message may carry lastEventId instead).
func (s *Server) realtimeWS(w http.ResponseWriter, r *http.Request) {
	if !s.realtimeOriginAllowed(r) {
		s.writeError(w, r, errRealtimeOrigin)
		return
	}
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true}) // origin checked above
	if err != nil {
		return
	}
	defer ws.CloseNow()
	ws.SetReadLimit(realtimeHardLimit)
	conn := s.rt.ConnectWith(realtimeCredential(r), realtime.ConnOptions{ReadAs: realtimeReader, Mark: realtimeMarkOf(r)})
	defer conn.Close()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	// The node shutting down closes the socket with 1001 Going Away (a
	// client reconnects, to any node, with lastEventId).
	defer s.onDrain(func() { ws.Close(websocket.StatusGoingAway, "the node is shutting down") })()

	sendRaw := func(b []byte) error {
		wctx, wcancel := context.WithTimeout(ctx, wsWriteTimeout)
		defer wcancel()
		return ws.Write(wctx, websocket.MessageText, b)
	}
	// sendBatch writes the messages of one Next, a frame each, under one
	// deadline of wsWriteTimeout (one timer per batch, not per frame).
	sendBatch := func(msgs []realtime.Message) error {
		wctx, wcancel := context.WithTimeout(ctx, wsWriteTimeout)
		defer wcancel()
		for _, m := range msgs {
			b, err := m.Encode()
			if err != nil {
				return err
			}
			if err := ws.Write(wctx, websocket.MessageText, b); err != nil {
				return err
			}
		}
		return nil
	}
	send := func(v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		return sendRaw(b)
	}
	if err := send(map[string]any{"type": "connected", "clientId": conn.ID()}); err != nil {
		return
	}
	// Delivery starts with the first subscription, from the cursor of
	// the connect (or of lastEventId): nothing committed in between is
	// missed.
	if id := r.URL.Query().Get("lastEventId"); id != "" {
		if e := conn.Resume(id); e != nil {
			_ = send(realtime.ErrorMessage(e))
		}
	}

	// Pings keep proxies from closing an idle connection and find dead
	// peers; the read loop below receives the pongs. A timer, not a
	// goroutine of its own: an idle connection costs two goroutines.
	var ping *time.Timer
	ping = time.AfterFunc(wsPingInterval, func() {
		pctx, pcancel := context.WithTimeout(ctx, wsWriteTimeout)
		err := ws.Ping(pctx)
		pcancel()
		if err != nil {
			cancel()
			return
		}
		ping.Reset(wsPingInterval)
	})
	defer ping.Stop()
	pumpDone := make(chan struct{})
	go func() {
		defer close(pumpDone)
		defer cancel()
		for {
			msgs, err := conn.Next(ctx)
			if errors.Is(err, realtime.ErrSlowConsumer) {
				_ = send(rtError(realtime.CodeSlowConsumer, "the connection fell too far behind and was dropped; reconnect with lastEventId"))
				ws.Close(websocket.StatusPolicyViolation, "slow consumer")
				return
			}
			if err != nil {
				return
			}
			if sendBatch(msgs) != nil {
				return
			}
		}
	}()
	for {
		typ, data, err := ws.Read(ctx)
		if err != nil {
			break
		}
		reply, start := s.wsHandle(ctx, conn, typ, data)
		if reply != nil && send(reply) != nil {
			break
		}
		if start {
			// After the subscribed answer, so a replay follows it.
			conn.Start()
		}
	}
	cancel()
	<-pumpDone
}

// wsHandle answers one client message; start asks for delivery to start
// once the answer is sent. A presence message that succeeds has no direct
// answer: the channel's presence-state is queued with the presence events,
// so it reaches the client in order with them.
func (s *Server) wsHandle(ctx context.Context, conn *realtime.Conn, typ websocket.MessageType, data []byte) (reply any, start bool) {
	if len(data) > realtimeMaxMessage {
		return rtError(realtime.CodeTooLarge, "message larger than 16 KB"), false
	}
	var m wsMessage
	if typ != websocket.MessageText || json.Unmarshal(data, &m) != nil {
		return rtError(realtime.CodeInvalidMessage, "messages are JSON objects with a type"), false
	}
	switch m.Type {
	case "auth":
		// An empty token signs the connection out (anonymous). The
		// mark is read first: a credential event committed while the
		// token is checked makes the hub recheck it.
		mark := s.rt.AuthMark()
		var p engine.Principal
		if tok := strings.TrimSpace(m.Token); tok != "" {
			var err error
			if p, err = s.authn.Authenticate(ctx, tok); err != nil {
				return rtError(realtime.CodeUnauthorized, "invalid or expired token"), false
			}
		}
		// An admin below editor reads app data as anonymous (the
		// connection's realtimeReader).
		p.Request = conn.Credential().Request
		conn.SetPrincipal(p, mark)
		return map[string]any{"type": "authed", "identity": realtime.IdentityOf(p)}, false
	case "subscribe":
		if !conn.Started() && m.LastEventID != "" {
			if e := conn.Resume(m.LastEventID); e != nil {
				return realtime.ErrorMessage(e), false
			}
		}
		topics, e := conn.Subscribe(m.Topics, m.Filter)
		if e != nil {
			return realtime.ErrorMessage(e), false
		}
		return realtime.Message{Type: "subscribed", Topics: topics}, true
	case "unsubscribe":
		topics, e := conn.Unsubscribe(m.Topics)
		if e != nil {
			return realtime.ErrorMessage(e), false
		}
		return realtime.Message{Type: "unsubscribed", Topics: topics}, false
	case "list-subs":
		return realtime.Message{Type: "subs", Topics: conn.Topics()}, false
	case "presence-track", "presence-untrack", "presence-state":
		var e *realtime.Error
		switch m.Type {
		case "presence-track":
			e = conn.Track(m.Channel, m.Key, m.State)
		case "presence-untrack":
			e = conn.Untrack(m.Channel)
		default:
			e = conn.ObservePresence(m.Channel)
		}
		if e != nil {
			return realtime.ErrorMessage(e), false
		}
		return nil, false
	}
	return rtError(realtime.CodeInvalidMessage, "unknown message type "+strconv.Quote(m.Type)), false
}
