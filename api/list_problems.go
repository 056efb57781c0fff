package api

import (
	"net/http"
	"strconv"
	"strings"

	"svcd/engine"
)

// SPEC.md has a list drop a malformed filter (every row the view rule
// admits comes back, 200) and ignore unknown sort columns. Silently, that
// turns a typo into an afternoon: the answer says what it dropped.
const (
	headerFilterError = "X-Svc-Filter-Error"
	headerSortError   = "X-Svc-Sort-Error"
)

// maxProblemHeader bounds a problem header's value.
const maxProblemHeader = 512

// tellDropped sets X-Svc-Filter-Error and X-Svc-Sort-Error when the list
// dropped its filter or sort terms, and logs the same at debug level.
func (s *Server) tellDropped(w http.ResponseWriter, r *http.Request, list *engine.RecordList) {
	if list.FilterProblem != "" {
		w.Header().Set(headerFilterError, headerSafe(list.FilterProblem))
		s.log.DebugContext(r.Context(), "list filter dropped", "path", r.URL.Path,
			"filter", r.URL.Query().Get("filter"), "reason", list.FilterProblem)
	}
	if list.SortProblem != "" {
		w.Header().Set(headerSortError, headerSafe(list.SortProblem))
		s.log.DebugContext(r.Context(), "list sort terms ignored", "path", r.URL.Path,
			"sort", r.URL.Query().Get("sort"), "reason", list.SortProblem)
	}
}

// headerSafe makes text a header value: printable ASCII kept, anything else
// (control characters, line breaks, non-ASCII letters of a quoted name)
// escaped as \uXXXX, at most maxProblemHeader bytes.
func headerSafe(text string) string {
	var b strings.Builder
	for _, r := range text {
		if r >= 0x20 && r < 0x7f {
			b.WriteRune(r)
		} else {
			q := strconv.QuoteRuneToASCII(r) // '\u00e9' or '\n'
			b.WriteString(q[1 : len(q)-1])
		}
		if b.Len() > maxProblemHeader {
			return b.String()[:maxProblemHeader-3] + "..."
		}
	}
	return b.String()
}
