package api

import (
	"net/http"

	"github.com/go-chi/chi/v5"
)

func (s *Server) mountSettings(r chi.Router) {
	r.Get("/admin/settings", s.getSettings)
	r.Patch("/admin/settings", s.patchSettings)
}

// getSettings lists settings; secrets are masked unless ?reveal=1 (the
// route is owner-only already).
func (s *Server) getSettings(w http.ResponseWriter, r *http.Request) {
	reveal := r.URL.Query().Get("reveal") == "1"
	writeData(w, http.StatusOK, s.eng.Settings(reveal))
}

func (s *Server) patchSettings(w http.ResponseWriter, r *http.Request) {
	body, err := s.readBody(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out, idx, err := s.eng.PatchSettings(r.Context(), body)
	setIndex(w, idx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, out)
}
