package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"svcd/cluster"
	"svcd/engine"
)

// TestErrorStatusTable: every domain error kind has one status, and the
// envelope's code equals it.
func TestErrorStatusTable(t *testing.T) {
	want := map[engine.Kind]int{
		engine.KindInternal:         500,
		engine.KindBadRequest:       400,
		engine.KindUnauthorized:     401,
		engine.KindForbidden:        403,
		engine.KindNotFound:         404,
		engine.KindMethodNotAllowed: 405,
		engine.KindConflict:         409,
		engine.KindPrecondition:     412,
		engine.KindValidation:       422,
		engine.KindUnavailable:      503,
		engine.KindTooManyRequests:  429,
		engine.KindTooLarge:         413,
		engine.KindTimeout:          408,
		engine.KindGone:             410,
		engine.KindUnsupportedMedia: 415,
	}
	for k, code := range want {
		if statusOf[k] != code {
			t.Errorf("kind %d maps to %d, want %d", k, statusOf[k], code)
		}
	}
	s := testServer()
	for k, code := range statusOf {
		rec := httptest.NewRecorder()
		s.writeError(rec, httptest.NewRequest(http.MethodGet, "/", nil), engine.Errorf(k, "kind %d", k))
		if rec.Code != code {
			t.Errorf("kind %d: status %d, want %d", k, rec.Code, code)
		}
		var env errorBody
		if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil || env.Code != code || env.Error == "" {
			t.Errorf("kind %d: envelope %s (%v)", k, rec.Body, err)
		}
	}
}

// TestWriteErrorMapping: cluster and context errors become 503 with
// Retry-After; anything unexpected is a 500 that does not leak its cause;
// a failed precondition carries the current ETag.
func TestWriteErrorMapping(t *testing.T) {
	s := testServer()
	cases := []struct {
		err        error
		status     int
		retryAfter string
		etag       string
		msg        string
	}{
		{cluster.ErrNoLeader, 503, "1", "", "No leader"},
		{fmt.Errorf("wrapped: %w", cluster.ErrShutdown), 503, "1", "", "No leader"},
		{cluster.ErrIndeterminate, 503, "1", "", "may or may not"},
		{fmt.Errorf("leader n1 runs an older version: %w", cluster.ErrUnknownToLeader), 503, "5", "", "older version"},
		{context.DeadlineExceeded, 503, "1", "", "timed out"},
		{context.Canceled, 503, "1", "", "timed out"},
		{errors.New("disk on fire: /secret/path"), 500, "", "", "Something went wrong"},
		{fmt.Errorf("wrapped: %w", engine.Errorf(engine.KindNotFound, "gone")), 404, "", "", "gone"},
		{&engine.Error{Kind: engine.KindPrecondition, Message: "changed", ETag: `W/"x-2"`}, 412, "", `W/"x-2"`, "changed"},
		{&engine.Error{Kind: engine.KindTooManyRequests, Message: "slow down", RetryAfter: 7}, 429, "7", "", "slow down"},
		{&engine.Error{Kind: engine.Kind(200), Message: "unknown kind"}, 500, "", "", "unknown kind"},
	}
	for _, c := range cases {
		rec := httptest.NewRecorder()
		s.writeError(rec, httptest.NewRequest(http.MethodPost, "/x", nil), c.err)
		body := rec.Body.String()
		if rec.Code != c.status || !strings.Contains(body, c.msg) {
			t.Errorf("%v: %d %s, want %d with %q", c.err, rec.Code, body, c.status, c.msg)
		}
		if strings.Contains(body, "secret") {
			t.Errorf("%v: the cause leaked: %s", c.err, body)
		}
		if got := rec.Header().Get("Retry-After"); got != c.retryAfter {
			t.Errorf("%v: Retry-After %q, want %q", c.err, got, c.retryAfter)
		}
		if got := rec.Header().Get("ETag"); got != c.etag {
			t.Errorf("%v: ETag %q, want %q", c.err, got, c.etag)
		}
		var env map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil || env["code"] != float64(rec.Code) {
			t.Errorf("%v: envelope %s", c.err, body)
		}
	}
}

// TestRecoverer: a panicking handler answers a 500 envelope with the node
// header; http.ErrAbortHandler is passed on.
func TestRecoverer(t *testing.T) {
	s := testServer()
	s.node = fakeNode{id: "node-x"}
	h := s.recoverer(s.nodeHeader(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") })))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	if rec.Code != 500 || !strings.Contains(rec.Body.String(), `"code":500`) || strings.Contains(rec.Body.String(), "boom") {
		t.Errorf("panic answered %d %s", rec.Code, rec.Body)
	}
	if rec.Header().Get("X-Svc-Node") != "node-x" {
		t.Errorf("no node header on a recovered panic")
	}

	abort := s.recoverer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) }))
	defer func() {
		if p := recover(); p != http.ErrAbortHandler {
			t.Errorf("recovered %v, want http.ErrAbortHandler passed on", p)
		}
	}()
	abort.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
}
