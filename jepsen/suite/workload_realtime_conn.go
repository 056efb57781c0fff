package suite

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// The realtime workload's two transports, on net/http and
// coder/websocket only: each opens one stream on a node, resuming after
// an event id, and hands every message to a callback until the stream
// ends, fails, stalls or the callback asks to stop.

const (
	// rtDialTimeout bounds connecting and the answer's headers.
	rtDialTimeout = 3 * time.Second
	// rtStall is how long an SSE stream may stay silent before the
	// subscriber gives up on it: the writers keep events flowing, so a
	// silent stream is a stopped, paused or cut-off node (the server's own
	// ping comes only every 25 s).
	rtStall = 4 * time.Second
	// rtPingEvery and rtPingTimeout: a WebSocket is pinged every second
	// and given up when a pong does not come back in time.
	rtPingEvery   = time.Second
	rtPingTimeout = 3 * time.Second
)

// rtMsg is one message of either transport (the SSE data line, a
// WebSocket text message).
type rtMsg struct {
	Type       string `json:"type"`
	EventID    string `json:"eventId"`
	Collection string `json:"collection"`
	ID         string `json:"id"` // delete
	Record     *struct {
		ID string `json:"id"`
	} `json:"record"`
	Code    string `json:"code"`
	Message string `json:"message"`
	// frameID is the SSE frame's id: line ("" on the WebSocket).
	frameID string
}

// errRTStop is what a handler returns to end the stream on purpose.
var errRTStop = errors.New("realtime: stream closed by the subscriber")

// rtTransport opens a stream on baseURL subscribed to topic, after lastID
// when set, and calls handle for every message until the stream ends
// (handle returning an error ends it with that error).
type rtTransport func(ctx context.Context, baseURL, topic, lastID string, handle func(rtMsg) error) error

// rtSSE is the Server-Sent Events transport: GET /api/v1/realtime?topics=
// with Last-Event-ID.
func rtSSE(ctx context.Context, baseURL, topic, lastID string, handle func(rtMsg) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", baseURL+"/api/v1/realtime?topics="+url.QueryEscape(topic), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true, ResponseHeaderTimeout: rtDialTimeout,
		DialContext: (&net.Dialer{Timeout: rtDialTimeout}).DialContext}}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("realtime stream: %d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	// A read that waits longer than rtStall cancels the request.
	stall := time.AfterFunc(rtStall, cancel)
	defer stall.Stop()
	return readSSEFrames(&stallReader{r: resp.Body, t: stall}, handle)
}

// stallReader re-arms its timer on every read that returns data.
type stallReader struct {
	r io.Reader
	t *time.Timer
}

func (s *stallReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if n > 0 {
		s.t.Reset(rtStall)
	}
	return n, err
}

// readSSEFrames parses an event stream: a frame ends with a blank line;
// comments (pings) are skipped; a frame's type is its event: field when
// the data does not carry one.
func readSSEFrames(r io.Reader, handle func(rtMsg) error) error {
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
				var m rtMsg
				if err := json.Unmarshal([]byte(strings.Join(data, "\n")), &m); err != nil {
					return fmt.Errorf("frame %q with bad data %q: %v", event, data, err)
				}
				if m.Type == "" {
					m.Type = event
				}
				m.frameID = id
				if err := handle(m); err != nil {
					return err
				}
			}
			id, event, data = "", "", nil
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue
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

// rtWS is the WebSocket transport: /realtime?lastEventId=, then a
// subscribe message; pinged every second.
func rtWS(ctx context.Context, baseURL, topic, lastID string, handle func(rtMsg) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	u := "ws" + strings.TrimPrefix(baseURL, "http") + "/realtime"
	if lastID != "" {
		u += "?lastEventId=" + url.QueryEscape(lastID)
	}
	dctx, dcancel := context.WithTimeout(ctx, rtDialTimeout)
	defer dcancel()
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true, DialContext: (&net.Dialer{Timeout: rtDialTimeout}).DialContext}}
	ws, _, err := websocket.Dial(dctx, u, &websocket.DialOptions{HTTPClient: hc})
	if err != nil {
		return err
	}
	defer ws.CloseNow()
	ws.SetReadLimit(1 << 20)
	sub, _ := json.Marshal(map[string]any{"type": "subscribe", "topics": []string{topic}})
	if err := ws.Write(dctx, websocket.MessageText, sub); err != nil {
		return fmt.Errorf("subscribe: %w", err)
	}
	// The pinger ends the connection when a pong is late: a stopped or
	// cut-off node never closes it itself.
	var wg sync.WaitGroup
	var pingErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(rtPingEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			pctx, pcancel := context.WithTimeout(ctx, rtPingTimeout)
			err := ws.Ping(pctx)
			pcancel()
			if err != nil && ctx.Err() == nil {
				pingErr = fmt.Errorf("ping: %w", err)
				cancel()
				return
			}
		}
	}()
	err = func() error {
		for {
			typ, b, err := ws.Read(ctx)
			if err != nil {
				return err
			}
			if typ != websocket.MessageText {
				return errors.New("binary message")
			}
			var m rtMsg
			if err := json.Unmarshal(b, &m); err != nil {
				return fmt.Errorf("message %q: %v", b, err)
			}
			if err := handle(m); err != nil {
				return err
			}
		}
	}()
	cancel()
	wg.Wait()
	if pingErr != nil {
		return pingErr
	}
	return err
}
