package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"svcd/engine"
	"svcd/engine/auth"
)

// auditProbe is an Auditor that looks at what the client has been sent
// so far.
type auditProbe struct {
	client   *httptest.ResponseRecorder
	audited  int
	sentWhen []int // bytes the client had when each entry was recorded
}

func (e *auditProbe) Audit(ctx context.Context, entry auth.AuditEntry) error {
	e.audited++
	e.sentWhen = append(e.sentWhen, e.client.Body.Len())
	return nil
}

// TestAuditBeforeAnswer: an admin write's audit entry is recorded before
// a byte of its answer reaches the client; an answer over the hold limit
// goes out as it comes.
func TestAuditBeforeAnswer(t *testing.T) {
	for _, tc := range []struct {
		name   string
		size   int
		status int
		early  bool // the client may have bytes before the entry
	}{
		{"small answer", 100, http.StatusCreated, false},
		{"no body", 0, http.StatusNoContent, false},
		{"refused", 60, http.StatusForbidden, false},
		{"over the hold limit", auditHoldLimit + 10, http.StatusOK, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			eng := &auditProbe{client: rec}
			s := testServer()
			s.auditor, s.settings, s.proxies = eng, fakeEngine{}, newProxyTrust("", s.log)
			h := s.audit(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("X-Test", "kept")
				w.WriteHeader(tc.status)
				for written := 0; written < tc.size; written += 1000 {
					w.Write([]byte(strings.Repeat("x", min(1000, tc.size-written))))
				}
			}))
			req := withPrincipal(httptest.NewRequest(http.MethodPost, "/api/v1/admin/collections", nil), admin(engine.RoleOwner))
			h.ServeHTTP(rec, req)
			if eng.audited != 1 {
				t.Fatalf("%d entries", eng.audited)
			}
			if !tc.early && eng.sentWhen[0] != 0 {
				t.Fatalf("the client had %d bytes before the entry was recorded", eng.sentWhen[0])
			}
			if tc.early && eng.sentWhen[0] == 0 {
				t.Fatalf("an answer over the limit was held")
			}
			if rec.Code != tc.status || rec.Body.Len() != tc.size || rec.Header().Get("X-Test") != "kept" {
				t.Fatalf("client got %d, %d bytes, header %q", rec.Code, rec.Body.Len(), rec.Header().Get("X-Test"))
			}
		})
	}
}
