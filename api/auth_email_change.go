package api

import (
	"net/http"

	"github.com/go-chi/chi/v5"
)

// The confirmed email change (docs/auth.md "Changing the email"): the
// signed-in account asks for a new address, a token is mailed to it, and
// the token with the account's password moves the account.

func (s *Server) requestEmailChange(w http.ResponseWriter, r *http.Request) {
	var in struct {
		NewEmail string `json:"new_email"`
	}
	if err := s.decodeJSON(w, r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := s.flows.RequestEmailChange(r.Context(), principal(r), chi.URLParam(r, "collection"), in.NewEmail); err != nil {
		s.writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, sent)
}

func (s *Server) confirmEmailChange(w http.ResponseWriter, r *http.Request) {
	s.confirmWithPassword(w, r, s.flows.ConfirmEmailChange, "changed")
}
