package api

import (
	"context"
	"net/http"

	"github.com/go-chi/chi/v5"
)

// SettingStore is what the settings routes, and every part of the HTTP layer
// that reads a setting, need (the engine's core).
type SettingStore interface {
	Setting(key string) string
	Settings(reveal bool) map[string]string
	PatchSettings(ctx context.Context, body []byte) (map[string]string, uint64, error)
}

func (s *Server) mountSettings(r chi.Router) {
	r.Get("/admin/settings", s.getSettings)
	r.Patch("/admin/settings", s.patchSettings)
}

// getSettings lists settings; secrets are masked unless ?reveal=1 (the
// route is owner-only already).
func (s *Server) getSettings(w http.ResponseWriter, r *http.Request) {
	reveal := r.URL.Query().Get("reveal") == "1"
	writeData(w, http.StatusOK, s.settings.Settings(reveal))
}

func (s *Server) patchSettings(w http.ResponseWriter, r *http.Request) {
	body, err := s.readBody(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out, idx, err := s.settings.PatchSettings(r.Context(), body)
	setIndex(w, idx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, out)
}
