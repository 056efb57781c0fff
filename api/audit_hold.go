package api

import (
	"net/http"
)

// auditHoldLimit bounds how much of an admin write's answer is held back
// until its audit entry is committed; a larger answer (none today) is sent
// as it comes, its entry following it.
const auditHoldLimit = 1 << 20

// heldResponse holds an answer (status, body) back so the audit entry of
// the action commits before the client hears of it: an acknowledged admin
// action is always in the audit log, whatever node crashes afterwards.
type heldResponse struct {
	w      http.ResponseWriter
	status int
	wrote  bool // WriteHeader was called
	body   []byte
	passed bool // the hold was given up: writes go straight through
}

func (h *heldResponse) Header() http.Header { return h.w.Header() }

func (h *heldResponse) WriteHeader(code int) {
	if h.wrote {
		return
	}
	h.wrote, h.status = true, code
	if h.passed {
		h.w.WriteHeader(code)
	}
}

func (h *heldResponse) Write(b []byte) (int, error) {
	if !h.wrote {
		h.WriteHeader(http.StatusOK)
	}
	if !h.passed && len(h.body)+len(b) > auditHoldLimit {
		h.pass()
	}
	if h.passed {
		return h.w.Write(b)
	}
	h.body = append(h.body, b...)
	return len(b), nil
}

// Flush gives the hold up: a handler that flushes wants its bytes out.
func (h *heldResponse) Flush() {
	h.pass()
	if f, ok := h.w.(http.Flusher); ok {
		f.Flush()
	}
}

// pass sends what is held and lets later writes through.
func (h *heldResponse) pass() {
	if h.passed {
		return
	}
	h.passed = true
	if h.wrote {
		h.w.WriteHeader(h.status)
	}
	if len(h.body) > 0 {
		_, _ = h.w.Write(h.body)
		h.body = nil
	}
}

// finish sends what is still held; a handler that wrote nothing answers
// 200 with no body, as net/http would.
func (h *heldResponse) finish() {
	if !h.wrote {
		h.wrote, h.status = true, http.StatusOK
	}
	h.pass()
}
