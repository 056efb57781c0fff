package pbcompat

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"
)

// streamWriteTimeout bounds one write to a stream: a client that stops
// reading does not hold it.
const streamWriteTimeout = 30 * time.Second

// errStreamDone: the stream's handler returned.
var errStreamDone = errors.New("pbcompat: the stream is closed")

// pbStream writes PocketBase's SSE frames (pb:tools/subscriptions
// message.go WriteSSE: "id:<clientId>\nevent:<name>\ndata:<json>\n\n"),
// one writer at a time.
type pbStream struct {
	mu       sync.Mutex
	done     bool
	w        http.ResponseWriter
	rc       *http.ResponseController
	clientID string
}

func newPBStream(w http.ResponseWriter, clientID string) *pbStream {
	return &pbStream{w: w, rc: http.NewResponseController(w), clientID: clientID}
}

// event writes one event named name with data (JSON on one line).
func (s *pbStream) event(name string, data []byte) error {
	b := make([]byte, 0, len(data)+len(name)+len(s.clientID)+24)
	b = append(b, "id:"...)
	b = append(b, s.clientID...)
	b = append(b, "\nevent:"...)
	b = append(b, name...)
	b = append(b, "\ndata:"...)
	b = append(b, data...)
	b = append(b, "\n\n"...)
	return s.write(b)
}

// write sends b and flushes it; nothing is written once finish ran (the
// response is gone then).
func (s *pbStream) write(b []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return errStreamDone
	}
	_ = s.rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
	if _, err := s.w.Write(b); err != nil {
		return err
	}
	return s.rc.Flush()
}

// finish marks the stream done.
func (s *pbStream) finish() {
	s.mu.Lock()
	s.done = true
	s.mu.Unlock()
}

// keepAlive writes a comment line every interval until ctx ends (an
// EventSource ignores comments; proxies see traffic), then closes done.
func (s *pbStream) keepAlive(ctx context.Context, cancel context.CancelFunc, every time.Duration, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if s.write([]byte(": ping\n\n")) != nil {
				cancel()
				return
			}
		}
	}
}
