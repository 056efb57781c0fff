package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Realtime transports of the fan-out scenarios (docs/realtime.md): a
// WebSocket at /realtime and an SSE stream at /api/v1/realtime, each
// subscribed to the benchmark collection. Subscribers are anonymous: the
// benchmark collection's view rule is "" (everyone).

// Transport names (--transport).
const (
	transportWS  = "ws"
	transportSSE = "sse"
)

// rtEvent is a realtime message as both transports carry it: an event
// (create, update, delete), subscribed, or an error.
type rtEvent struct {
	Type       string `json:"type"`
	EventID    string `json:"eventId"`
	Collection string `json:"collection"`
	Record     struct {
		ID string  `json:"id"`
		N  float64 `json:"n"` // fanout-rate: the create's send time, Unix µs
	} `json:"record"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// eventStream is one open subscription.
type eventStream interface {
	// next blocks until the next message; an error ends the stream.
	next(ctx context.Context) (rtEvent, error)
	close()
}

// dialer opens one subscription to coll on the node at base.
type dialer func(ctx context.Context, base, coll string) (eventStream, error)

// newDialer returns the dialer of a transport. Both use their own
// transport, never the workers' keep-alive pool: every subscription is a
// connection of its own.
func newDialer(transport string) dialer {
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConnsPerHost:   16,
		ResponseHeaderTimeout: 30 * time.Second,
		DisableCompression:    true,
	}
	hc := &http.Client{Transport: tr} // no Timeout: streams stay open
	if transport == transportSSE {
		return func(ctx context.Context, base, coll string) (eventStream, error) { return dialSSE(ctx, hc, base, coll) }
	}
	return func(ctx context.Context, base, coll string) (eventStream, error) { return dialWS(ctx, hc, base, coll) }
}

// awaitSubscribed reads s until its subscribed message.
func awaitSubscribed(ctx context.Context, s eventStream) error {
	for {
		ev, err := s.next(ctx)
		if err != nil {
			return err
		}
		switch ev.Type {
		case "subscribed":
			return nil
		case "error":
			return fmt.Errorf("subscribe: %s: %s", ev.Code, ev.Message)
		}
	}
}

func decodeEvent(data []byte) (rtEvent, error) {
	var ev rtEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		return ev, fmt.Errorf("realtime message %q: %w", truncate(string(data), 120), err)
	}
	return ev, nil
}
