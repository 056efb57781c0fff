package api

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"

	"svcd/realtime"
)

// sseKeepBuf is the largest frame buffer a stream keeps between writes.
const sseKeepBuf = 16 << 10

// defaultSSEKeepAlive is how often an idle stream gets a comment line, so
// proxies keep it open (Options.SSEKeepAlive).
const defaultSSEKeepAlive = 25 * time.Second

// sseStream writes SSE frames, one writer at a time.
type sseStream struct {
	mu sync.Mutex
	// done is set, under mu, when the handler returns: the response is
	// finished and nothing may write to it any more (net/http's writer is
	// gone; a write would crash the process).
	done bool
	w    http.ResponseWriter
	rc   *http.ResponseController
	// buf is reused for the frames of each write; deadline is the write
	// deadline last set (see write).
	buf      []byte
	deadline time.Time
}

func (s *sseStream) frame(id, event string, data any) error {
	b, err := json.Marshal(data)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.write(appendSSEFrame(nil, id, event, b))
}

// appendSSEFrame appends one event: id (when set), event name and the
// JSON data on one line.
func appendSSEFrame(buf []byte, id, event string, data []byte) []byte {
	if id != "" {
		buf = append(buf, "id: "...)
		buf = append(buf, id...)
		buf = append(buf, '\n')
	}
	buf = append(buf, "event: "...)
	buf = append(buf, event...)
	buf = append(buf, "\ndata: "...)
	buf = append(buf, data...)
	return append(buf, "\n\n"...)
}

func (s *sseStream) raw(text string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.write([]byte(text))
}

// write sends b and flushes it, s.mu held. The write deadline keeps a
// client that stops reading from holding the stream: each write gets at
// least half of wsWriteTimeout, at most all of it. Moving the deadline
// resets a runtime timer, so it moves only once half of it is used
// rather than on every event.
func (s *sseStream) write(b []byte) error {
	if s.done {
		return errSSEDone
	}
	if now := time.Now(); s.deadline.Sub(now) < wsWriteTimeout/2 {
		s.deadline = now.Add(wsWriteTimeout)
		_ = s.rc.SetWriteDeadline(s.deadline)
	}
	if _, err := s.w.Write(b); err != nil {
		return err
	}
	return s.rc.Flush()
}

// errSSEDone: the stream's handler returned.
var errSSEDone = errors.New("sse: the stream is closed")

// finish marks the stream done: a writer still running (the keep-alive
// ticker) writes nothing after this returns.
func (s *sseStream) finish() {
	s.mu.Lock()
	s.done = true
	s.mu.Unlock()
}

func (s *sseStream) message(m realtime.Message) error { return s.messages([]realtime.Message{m}) }

// messages writes a batch of messages with one write and one flush (a
// record event's encoding is shared by the subscribers that see it alike).
func (s *sseStream) messages(msgs []realtime.Message) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	buf := s.buf[:0]
	for _, m := range msgs {
		b, err := m.Encode()
		if err != nil {
			return err
		}
		buf = appendSSEFrame(buf, m.EventID, m.Type, b)
	}
	err := s.write(buf)
	if cap(buf) <= sseKeepBuf {
		s.buf = buf[:0]
	} else {
		s.buf = nil // a replay's burst: let it go
	}
	return err
}

// realtimeSSE serves GET /api/v1/realtime: the first frame is event
// connect with the clientId. Query topics (comma list) and filter
// subscribe at connect. Last-Event-ID (or query lastEventId) replays the
// missed events: right after connect when topics are given, else after
// the first subscribe POST.
func (s *Server) realtimeSSE(w http.ResponseWriter, r *http.Request) {
	if !s.realtimeOriginAllowed(r) {
		s.writeError(w, r, errRealtimeOrigin)
		return
	}
	// A stream whose credential ends is closed (after an error event):
	// the client reconnects with Last-Event-ID and a valid credential.
	conn := s.rt.ConnectWith(realtimeCredential(r), realtime.ConnOptions{ReadAs: realtimeReader, CloseOnRevoke: true, Mark: realtimeMarkOf(r)})
	defer conn.Close()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	st := &sseStream{w: w, rc: http.NewResponseController(w)}
	if st.frame("", "connect", map[string]string{"clientId": conn.ID()}) != nil {
		return
	}
	q := r.URL.Query()
	last := r.Header.Get("Last-Event-ID")
	if last == "" {
		last = q.Get("lastEventId")
	}
	if last != "" {
		if e := conn.Resume(last); e != nil {
			_ = st.message(realtime.ErrorMessage(e))
			last = ""
		}
	}
	hasTopics := false
	if t := q.Get("topics"); strings.TrimSpace(t) != "" {
		topics, e := conn.Subscribe(strings.Split(t, ","), q.Get("filter"))
		if e != nil {
			_ = st.message(realtime.ErrorMessage(e))
		} else {
			hasTopics = true
			_ = st.message(realtime.Message{Type: "subscribed", Topics: topics})
		}
	}
	if last == "" || hasTopics {
		conn.Start()
	}

	ctx, cancel := context.WithCancel(r.Context())
	pinged := make(chan struct{})
	// Before the handler returns: stop the keep-alive writer and wait for
	// it, and refuse any write after (a ping racing the return wrote to a
	// finished response and crashed the node).
	defer func() {
		cancel()
		st.finish()
		<-pinged
	}()
	go func() {
		defer close(pinged)
		t := time.NewTicker(s.sseKeepAlive)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if st.raw(": ping\n\n") != nil {
					cancel()
					return
				}
			}
		}
	}()
	for {
		msgs, err := conn.Next(ctx)
		if errors.Is(err, realtime.ErrSlowConsumer) {
			_ = st.message(rtError(realtime.CodeSlowConsumer, "the stream fell too far behind and was dropped; reconnect with Last-Event-ID"))
			return
		}
		if errors.Is(err, realtime.ErrUnauthorized) {
			_ = st.message(rtError(realtime.CodeUnauthorized, "the stream's credentials no longer hold (signed out, revoked, expired or changed); it is closed: reconnect with a valid credential and Last-Event-ID"))
			return
		}
		if err != nil {
			return
		}
		if st.messages(msgs) != nil {
			return
		}
	}
}

// sseSubscribe is the body of POST /api/v1/realtime.
type sseSubscribe struct {
	ClientID string   `json:"clientId"`
	Topics   []string `json:"topics"`
	Filter   string   `json:"filter"`
}

// realtimeSSESubscribe serves POST /api/v1/realtime: it sets the client's
// subscriptions to exactly topics (an empty list unsubscribes all), each
// with filter. The caller must be the stream's identity; a stream opened
// anonymously takes the caller's.
func (s *Server) realtimeSSESubscribe(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, realtimeMaxMessage+1))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if len(body) > realtimeMaxMessage {
		rtHTTPError(w, http.StatusRequestEntityTooLarge, realtime.CodeTooLarge, "body larger than 16 KB")
		return
	}
	var req sseSubscribe
	if json.Unmarshal(body, &req) != nil || req.ClientID == "" {
		rtHTTPError(w, http.StatusBadRequest, realtime.CodeInvalidMessage, "the body must be {clientId, topics[], filter?}")
		return
	}
	conn := s.rt.Lookup(req.ClientID)
	if conn == nil {
		s.writeError(w, r, errRealtimeClient)
		return
	}
	p, held := principal(r), conn.Credential()
	if !sameIdentity(held, p) {
		s.writeError(w, r, errRealtimeIdentity)
		return
	}
	if p.Kind != held.Kind {
		p.Request = held.Request
		conn.SetPrincipal(p, realtimeMarkOf(r))
	}
	topics, e := conn.Replace(req.Topics, req.Filter)
	if e != nil {
		status := http.StatusBadRequest
		if e.Code == realtime.CodeTooLarge {
			status = http.StatusRequestEntityTooLarge
		}
		rtHTTPError(w, status, e.Code, e.Message)
		return
	}
	conn.Start()
	if topics == nil {
		topics = []string{}
	}
	writeData(w, http.StatusOK, map[string]any{"clientId": conn.ID(), "topics": topics})
}

// realtimeSSEDisconnect serves DELETE /api/v1/realtime/{clientId}.
func (s *Server) realtimeSSEDisconnect(w http.ResponseWriter, r *http.Request) {
	conn := s.rt.Lookup(chi.URLParam(r, "clientId"))
	if conn == nil {
		s.writeError(w, r, errRealtimeClient)
		return
	}
	if !sameIdentity(conn.Credential(), principal(r)) {
		s.writeError(w, r, errRealtimeIdentity)
		return
	}
	conn.Close()
	w.WriteHeader(http.StatusNoContent)
}

// rtHTTPError is the error envelope with the realtime code in details.
func rtHTTPError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, errorBody{Error: msg, Code: status, Details: map[string]any{"code": code}})
}
