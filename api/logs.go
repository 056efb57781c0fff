package api

import (
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"svcd/engine"
	"svcd/internal/logfile"
)

// The node's log (viewer and above; docs/operations.md "Logs"):
//
//	GET  /admin/logs          q, date | from & to, level, page, perPage, node=all
//	POST /admin/logs/search   {query (JSONPath), from?, to?, limit?, page?}; ?node=all
//
// Both answer the list shape {data: {data, page, perPage, totalItems,
// totalPages}}, newest line first, for the node they are sent to; with
// ?node=all they gather every member's (logs_fanout.go) and add nodes
// (those that answered) and failed ({node, error} of those that did not).

// LogFolder is what the HTTP layer needs of the node's log folder
// (internal/logfile.Dir).
type LogFolder interface {
	Now() time.Time
	Write(p []byte) (int, error)
	Query(q logfile.Query) (logfile.Page, error)
}

// defaultSearchLimit is a search's limit unless it says.
const defaultSearchLimit = 100

func (s *Server) mountLogs(r chi.Router) {
	if s.logs == nil {
		return
	}
	r.Get("/admin/logs", s.listLogs)
	r.Post("/admin/logs/search", s.searchLogs)
}

// logsAnswer is a page of lines, with the members asked under ?node=all.
type logsAnswer struct {
	logfile.Page
	Nodes  []string     `json:"nodes,omitempty"`
	Failed []failedNode `json:"failed,omitempty"`
}

// failedNode is a member whose lines are missing from a gathered answer.
type failedNode struct {
	Node  string `json:"node"`
	Error string `json:"error"`
}

// badQuery collects malformed parameters into one 400 that names each.
type badQuery struct {
	order []string
	msgs  map[string]string
}

func (b *badQuery) fail(name, msg string) {
	if b.msgs == nil {
		b.msgs = map[string]string{}
	}
	if _, ok := b.msgs[name]; !ok {
		b.order = append(b.order, name)
	}
	b.msgs[name] = msg
}

func (b *badQuery) err(kind engine.Kind, what string) error {
	if len(b.order) == 0 {
		return nil
	}
	parts := make([]string, len(b.order))
	details := make(map[string]any, len(b.order))
	for i, n := range b.order {
		parts[i] = n + " " + b.msgs[n]
		details[n] = b.msgs[n]
	}
	return &engine.Error{Kind: kind, Message: what + ": " + strings.Join(parts, "; "), Details: details}
}

// logRange resolves date or from/to into a time range (default: today,
// UTC, by the folder's clock).
func (s *Server) logRange(b *badQuery, date, from, to string) (time.Time, time.Time) {
	today, _ := time.Parse(logfile.DayLayout, s.logs.Now().Format(logfile.DayLayout))
	lo, hi := today, today.Add(24*time.Hour-time.Nanosecond)
	if date != "" {
		if from != "" || to != "" {
			b.fail("date", "cannot be combined with from or to")
			return lo, hi
		}
		d, err := time.Parse(logfile.DayLayout, date)
		if err != nil {
			b.fail("date", "must be a day as YYYY-MM-DD")
			return lo, hi
		}
		return d, d.Add(24*time.Hour - time.Nanosecond)
	}
	if from == "" && to == "" {
		return lo, hi
	}
	lo, hi = time.Time{}, s.logs.Now()
	if from != "" {
		t, ok := parseLogTime(from, false)
		if !ok {
			b.fail("from", "must be a day (YYYY-MM-DD) or an RFC 3339 time")
		}
		lo = t
	}
	if to != "" {
		t, ok := parseLogTime(to, true)
		if !ok {
			b.fail("to", "must be a day (YYYY-MM-DD) or an RFC 3339 time")
		}
		hi = t
	}
	if hi.Before(lo) {
		b.fail("to", "must not be before from")
	}
	return lo, hi
}

// parseLogTime reads a day (its first instant, or its last when end) or
// an RFC 3339 time.
func parseLogTime(v string, end bool) (time.Time, bool) {
	if d, err := time.Parse(logfile.DayLayout, v); err == nil {
		if end {
			d = d.Add(24*time.Hour - time.Nanosecond)
		}
		return d, true
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	return t.UTC(), err == nil
}

// logPageParams reads page and perPage (perPage clamped to max).
func logPageParams(b *badQuery, v url.Values, perPageName string, def, max int) (int, int) {
	num := func(name string, def int) int {
		raw := strings.TrimSpace(v.Get(name))
		if raw == "" {
			return def
		}
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 {
			b.fail(name, "must be a positive integer")
			return def
		}
		return n
	}
	return num("page", 1), min(num(perPageName, def), max)
}

// logsQuery reads GET /admin/logs's parameters.
func (s *Server) logsQuery(r *http.Request) (logfile.Query, error) {
	v := r.URL.Query()
	var b badQuery
	q := logfile.Query{Q: v.Get("q")}
	q.From, q.To = s.logRange(&b, v.Get("date"), v.Get("from"), v.Get("to"))
	if raw := v.Get("level"); raw != "" {
		var l slog.Level
		if err := l.UnmarshalText([]byte(raw)); err != nil {
			b.fail("level", "must be debug, info, warn or error")
		}
		q.Level = &l
	}
	q.Page, q.PerPage = logPageParams(&b, v, "perPage", engine.DefaultPerPage, s.perPageCap(r))
	checkNodeParam(&b, v)
	return q, b.err(engine.KindBadRequest, "Invalid log query")
}

// checkNodeParam accepts node= "" or "all".
func checkNodeParam(b *badQuery, v url.Values) {
	if n := v.Get("node"); n != "" && n != "all" {
		b.fail("node", `must be "all" (or absent: this node)`)
	}
}

func (s *Server) listLogs(w http.ResponseWriter, r *http.Request) {
	q, err := s.logsQuery(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.answerLogs(w, r, q, nil)
}

// searchBody is POST /admin/logs/search's body.
type searchBody struct {
	Query string `json:"query"`
	From  string `json:"from"`
	To    string `json:"to"`
	Limit int    `json:"limit"`
	Page  int    `json:"page"`
}

// searchQuery checks a search body: a bad JSONPath or range is a 422
// naming the field.
func (s *Server) searchQuery(r *http.Request, in searchBody) (logfile.Query, error) {
	var b badQuery
	q := logfile.Query{Page: max(in.Page, 1), PerPage: defaultSearchLimit}
	if in.Limit != 0 {
		q.PerPage = in.Limit
	}
	if in.Limit < 0 {
		b.fail("limit", "must be a positive integer")
	}
	if in.Page < 0 {
		b.fail("page", "must be a positive integer")
	}
	q.PerPage = min(q.PerPage, s.perPageCap(r))
	if strings.TrimSpace(in.Query) == "" {
		b.fail("query", "is required: a JSONPath query such as $[?@.status >= 500]")
	} else if m, err := logfile.Compile(in.Query); err != nil {
		b.fail("query", err.Error())
	} else {
		q.Match = m
	}
	q.From, q.To = s.logRange(&b, "", in.From, in.To)
	if err := b.err(engine.KindValidation, "Invalid log search"); err != nil {
		return q, err
	}
	var nb badQuery
	checkNodeParam(&nb, r.URL.Query())
	return q, nb.err(engine.KindBadRequest, "Invalid log search")
}

func (s *Server) searchLogs(w http.ResponseWriter, r *http.Request) {
	var in searchBody
	if err := s.decodeJSON(w, r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	q, err := s.searchQuery(r, in)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.answerLogs(w, r, q, &in)
}

// answerLogs answers q from this node, or from every member under
// ?node=all (search set for a search, whose body is sent on).
func (s *Server) answerLogs(w http.ResponseWriter, r *http.Request, q logfile.Query, search *searchBody) {
	if r.URL.Query().Get("node") == "all" && r.Header.Get(fanoutHeader) == "" {
		a, err := s.gatherLogs(r, q, search)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		writeData(w, http.StatusOK, a)
		return
	}
	p, err := s.logs.Query(q)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, logsAnswer{Page: p})
}
