package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/coder/websocket"
)

// wsStream is a subscription over the WebSocket at /realtime.
type wsStream struct{ c *websocket.Conn }

// dialWS connects, sends {type: subscribe, topics: [coll]} and returns once
// the server answered subscribed.
func dialWS(ctx context.Context, hc *http.Client, base, coll string) (eventStream, error) {
	u := "ws" + strings.TrimPrefix(base, "http") + "/realtime"
	c, _, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPClient: hc})
	if err != nil {
		return nil, err
	}
	c.SetReadLimit(1 << 20)
	s := &wsStream{c: c}
	msg, err := json.Marshal(map[string]any{"type": "subscribe", "topics": []string{coll}})
	if err == nil {
		err = c.Write(ctx, websocket.MessageText, msg)
	}
	if err == nil {
		err = awaitSubscribed(ctx, s)
	}
	if err != nil {
		c.CloseNow()
		return nil, err
	}
	return s, nil
}

// next reads one message; reading also answers the server's pings.
func (s *wsStream) next(ctx context.Context) (rtEvent, error) {
	typ, data, err := s.c.Read(ctx)
	if err != nil {
		return rtEvent{}, err
	}
	if typ != websocket.MessageText {
		return rtEvent{}, fmt.Errorf("unexpected %v message", typ)
	}
	return decodeEvent(data)
}

func (s *wsStream) close() { s.c.CloseNow() }
