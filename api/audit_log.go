package api

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"svcd/engine"
	"svcd/engine/auth"
)

// GET /api/v1/admin/audit-log (viewer): a page of the audit log, newest
// first, in SPEC.md's list shape {data: {data, page, perPage, totalItems,
// totalPages}}. Query parameters:
//
//	page          1-based page (default 1)
//	perPage       entries per page (default 30; above 500 clamped to 500)
//	actorId       only this admin's entries
//	actionPrefix  only actions that start with it ("collections.")
//	from, to      unix seconds, both inclusive
//
// A malformed value is a 400 naming the parameter.
func (s *Server) auditLog(w http.ResponseWriter, r *http.Request) {
	q, err := auditQuery(r.URL.Query())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	page, err := s.admins.AuditLog(r.Context(), q)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, page)
}

// auditQuery reads the audit log's query parameters; every malformed one
// is named in the 400's details.
func auditQuery(v url.Values) (auth.AuditQuery, error) {
	q := auth.AuditQuery{ActorID: v.Get("actorId"), ActionPrefix: v.Get("actionPrefix")}
	bad := map[string]string{}
	var order []string
	fail := func(name, msg string) {
		if _, ok := bad[name]; !ok {
			order = append(order, name)
		}
		bad[name] = msg
	}
	positive := func(name string, def int) int {
		raw := strings.TrimSpace(v.Get(name))
		if raw == "" {
			return def
		}
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 {
			fail(name, "must be a positive integer")
			return def
		}
		return n
	}
	seconds := func(name string) *int64 {
		raw := strings.TrimSpace(v.Get(name))
		if raw == "" {
			return nil
		}
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || n < 0 {
			fail(name, "must be a time in unix seconds (a non-negative integer)")
			return nil
		}
		return &n
	}
	q.Page = positive("page", 1)
	q.PerPage = min(positive("perPage", engine.DefaultPerPage), auth.MaxAuditPerPage)
	q.From, q.To = seconds("from"), seconds("to")
	if q.From != nil && q.To != nil && *q.From > *q.To {
		fail("to", "must not be before from")
	}
	if len(bad) == 0 {
		return q, nil
	}
	msgs := make([]string, len(order))
	details := make(map[string]any, len(bad))
	for i, name := range order {
		msgs[i] = name + " " + bad[name]
		details[name] = bad[name]
	}
	return q, &engine.Error{Kind: engine.KindBadRequest, Message: "Invalid audit log query: " + strings.Join(msgs, "; "), Details: details}
}
