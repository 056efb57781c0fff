package api

import (
	"net/http"

	"github.com/go-chi/chi/v5"
)

// mountFilesAdmin serves the admin's read of stored files (editors and
// up: file names are app data, as records are):
//
//	GET /admin/files              the storage driver and, per collection and file field, records, files and bytes
//	GET /admin/files/{collection} a collection's files (page, perPage, sort), newest first
//
// Both read the files' metadata on this node's replica; the bucket is
// not listed.
func (s *Server) mountFilesAdmin(r chi.Router) {
	r.Get("/admin/files", s.fileStats)
	r.Get("/admin/files/{collection}", s.listFiles)
}

func (s *Server) fileStats(w http.ResponseWriter, r *http.Request) {
	st, err := s.files.Stats(r.Context())
	s.answer(w, r, http.StatusOK, st, 0, err)
}

func (s *Server) listFiles(w http.ResponseWriter, r *http.Request) {
	page, perPage, err := pageParams(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	list, err := s.files.List(r.Context(), chi.URLParam(r, "collection"), page, perPage, r.URL.Query().Get("sort"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	// The list API's shape: {data, page, perPage, totalItems, totalPages}.
	writeJSON(w, http.StatusOK, list)
}
