package api

import (
	"context"
	"net/http"

	"github.com/go-chi/chi/v5"

	"svcd/engine"
	"svcd/engine/pbimport"
)

// RowImports is what the import routes need (engine/pbimport).
type RowImports interface {
	ImportRows(ctx context.Context, p engine.Principal, coll string, rows []pbimport.Row) (*pbimport.Result, uint64, error)
	ImportAdmins(ctx context.Context, p engine.Principal, role string, rows []pbimport.AdminRow) (*pbimport.Result, uint64, error)
	ImportOAuth2Links(ctx context.Context, p engine.Principal, coll string, links []pbimport.LinkRow) (*pbimport.Result, uint64, error)
}

// Importing another system's records with their ids, times and password
// hashes (owner; docs/pocketbase.md "Import"): what `svcd
// import-pocketbase` sends.
//
//	POST /admin/import-rows  {collection, rows: [{id, created, updated, values, password_hash?}]}
func (s *Server) mountImportRows(r chi.Router) {
	if s.rowImports == nil {
		return
	}
	r.Post("/admin/import-rows", s.importRows)
	r.Post("/admin/import-admins", s.importAdmins)
	r.Post("/admin/import-oauth2-links", s.importOAuth2Links)
}

func (s *Server) importRows(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Collection string         `json:"collection"`
		Rows       []pbimport.Row `json:"rows"`
	}
	if err := s.decodeJSON(w, r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	if in.Collection == "" {
		s.writeError(w, r, engine.FieldError("collection", "is required"))
		return
	}
	res, idx, err := s.rowImports.ImportRows(r.Context(), principal(r), in.Collection, in.Rows)
	s.answer(w, r, http.StatusOK, res, idx, err)
}
