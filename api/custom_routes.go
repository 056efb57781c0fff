package api

import (
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	"svcd/engine/jsvm"
)

// Custom routes: /api/v1/custom/<path>, any method, answered by the code
// of the route admins saved (engine/jsvm, docs/javascript.md). The
// caller is authenticated like on any route (a bad Authorization header
// is a 401) and rate-limited by the root middleware like any /api/*
// path; the code's helpers act with the rights the caller has on the
// record routes.

func (s *Server) mountCustom(r chi.Router) {
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		r.MethodFunc(m, "/custom/*", s.serveCustom)
	}
}

func (s *Server) serveCustom(w http.ResponseWriter, r *http.Request) {
	body, err := s.readBody(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	res, err := s.scripts.ServeRoute(r.Context(), jsvm.RouteRequest{
		Method:      r.Method,
		Path:        chi.URLParam(r, "*"),
		Query:       r.URL.Query(),
		Header:      r.Header,
		Body:        body,
		ContentType: r.Header.Get("Content-Type"),
		Caller:      principal(r),
		Principal:   recordCaller(r),
	})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	h := w.Header()
	for k, v := range res.Header {
		h.Set(k, v)
	}
	h.Set("Cache-Control", cacheControl(h.Get("Cache-Control")))
	if res.Body == nil {
		w.WriteHeader(res.Status)
		return
	}
	writeBytes(w, res.Status, append(res.Body, '\n'))
}

// cacheControl is the route's own Cache-Control, or no-store: a
// custom answer may depend on the caller.
func cacheControl(set string) string {
	if strings.TrimSpace(set) != "" {
		return set
	}
	return "no-store"
}
