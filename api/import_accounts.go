package api

import (
	"net/http"

	"svcd/engine"
	"svcd/engine/pbimport"
)

// Importing another system's operators as admins and its OAuth2 links
// (owner; docs/pocketbase.md "Import"): what `svcd import-pocketbase`
// sends for PocketBase's superusers and _externalAuths. Both skip what
// exists, so an import run twice changes nothing.
//
//	POST /admin/import-admins       {role?, admins: [{email, password_hash, created?, updated?}]}
//	POST /admin/import-oauth2-links {collection, links: [{user_id, provider, subject, created?}]}

func (s *Server) importAdmins(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Role   string              `json:"role"`
		Admins []pbimport.AdminRow `json:"admins"`
	}
	if err := s.decodeJSON(w, r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	res, idx, err := s.rowImports.ImportAdmins(r.Context(), principal(r), in.Role, in.Admins)
	s.answer(w, r, http.StatusOK, res, idx, err)
}

func (s *Server) importOAuth2Links(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Collection string             `json:"collection"`
		Links      []pbimport.LinkRow `json:"links"`
	}
	if err := s.decodeJSON(w, r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	if in.Collection == "" {
		s.writeError(w, r, engine.FieldError("collection", "is required"))
		return
	}
	res, idx, err := s.rowImports.ImportOAuth2Links(r.Context(), principal(r), in.Collection, in.Links)
	s.answer(w, r, http.StatusOK, res, idx, err)
}
