package api

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"

	"svcd/cluster"
	"svcd/engine"
)

// statusOf is the one table from domain error kinds to HTTP status codes.
var statusOf = map[engine.Kind]int{
	engine.KindInternal:            http.StatusInternalServerError,
	engine.KindBadRequest:          http.StatusBadRequest,
	engine.KindUnauthorized:        http.StatusUnauthorized,
	engine.KindForbidden:           http.StatusForbidden,
	engine.KindNotFound:            http.StatusNotFound,
	engine.KindMethodNotAllowed:    http.StatusMethodNotAllowed,
	engine.KindConflict:            http.StatusConflict,
	engine.KindPrecondition:        http.StatusPreconditionFailed,
	engine.KindValidation:          http.StatusUnprocessableEntity,
	engine.KindUnavailable:         http.StatusServiceUnavailable,
	engine.KindTooManyRequests:     http.StatusTooManyRequests,
	engine.KindTooLarge:            http.StatusRequestEntityTooLarge,
	engine.KindTimeout:             http.StatusRequestTimeout,
	engine.KindInsufficientStorage: http.StatusInsufficientStorage,
	engine.KindGone:                http.StatusGone,
	engine.KindUnsupportedMedia:    http.StatusUnsupportedMediaType,
}

// errorBody is SPEC.md's error envelope.
type errorBody struct {
	Error   string         `json:"error"`
	Code    int            `json:"code"`
	Details map[string]any `json:"details,omitempty"`
}

// toDomain turns any error into the domain error the client sees; anything
// unexpected becomes a 500 whose cause goes to the log only.
func toDomain(err error) (*engine.Error, bool) {
	if e := engine.AsError(err); e != nil {
		return e, e.Kind == engine.KindInternal
	}
	switch {
	case errors.Is(err, cluster.ErrNoLeader), errors.Is(err, cluster.ErrShutdown):
		return &engine.Error{Kind: engine.KindUnavailable, Message: "No leader is available; retry shortly", RetryAfter: 1}, false
	case errors.Is(err, cluster.ErrDiskFull):
		return &engine.Error{Kind: engine.KindInsufficientStorage, Message: diskMessage(err), RetryAfter: 5}, false
	case errors.Is(err, cluster.ErrStalled), errors.Is(err, cluster.ErrUnknownToLeader):
		return &engine.Error{Kind: engine.KindUnavailable, Message: err.Error(), RetryAfter: 5}, false
	case errors.Is(err, cluster.ErrIndeterminate):
		return &engine.Error{Kind: engine.KindUnavailable, Message: "Leadership changed; the write may or may not have been applied", RetryAfter: 1}, false
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return &engine.Error{Kind: engine.KindUnavailable, Message: "The request timed out", RetryAfter: 1}, false
	}
	return &engine.Error{Kind: engine.KindInternal, Message: "Something went wrong while processing the request"}, true
}

// diskMessage is the answer to a write refused for a full disk: the
// node's own words, which name it and its free space.
func diskMessage(err error) string {
	return "Insufficient storage: " + err.Error()
}

// writeError writes the error envelope for err.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	e, internal := toDomain(err)
	if internal {
		s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	status := statusOf[e.Kind]
	if status == 0 {
		status = http.StatusInternalServerError
	}
	if e.ETag != "" {
		w.Header().Set("ETag", e.ETag)
	}
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(e.RetryAfter))
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="svc"`)
	}
	writeJSON(w, status, errorBody{Error: e.Message, Code: status, Details: e.Details})
}

// writeData writes {"data": v}.
func writeData(w http.ResponseWriter, status int, v any) {
	writeJSON(w, status, struct {
		Data any `json:"data"`
	}{v})
}

// writeRawData writes {"data": <raw JSON>} without re-encoding raw.
func writeRawData(w http.ResponseWriter, status int, raw []byte) {
	buf := make([]byte, 0, len(raw)+10)
	buf = append(buf, `{"data":`...)
	buf = append(buf, raw...)
	buf = append(buf, "}\n"...)
	writeBytes(w, status, buf)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		slog.Error("encode response", "err", err)
		status, b = http.StatusInternalServerError, []byte(`{"error":"encode response","code":500}`)
	}
	writeBytes(w, status, append(b, '\n'))
}

func writeBytes(w http.ResponseWriter, status int, b []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	w.Write(b)
}

// setIndex sets X-Svc-Index on a write's response.
func setIndex(w http.ResponseWriter, idx uint64) {
	if idx > 0 {
		w.Header().Set("X-Svc-Index", strconv.FormatUint(idx, 10))
	}
}
