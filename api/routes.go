package api

import (
	"net/http"
	"sort"

	"github.com/go-chi/chi/v5"
)

// Routes lists every route the router serves, as "METHOD /pattern" with
// chi's {name} segments, sorted. The doc test checks docs/api.md's table
// of routes against it, so that a new route cannot go undocumented.
func (s *Server) Routes() []string {
	var out []string
	chi.Walk(s.router, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		out = append(out, method+" "+route)
		return nil
	})
	sort.Strings(out)
	return out
}
