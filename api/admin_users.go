package api

import (
	"net/http"

	"github.com/go-chi/chi/v5"
)

// An admin's view of a user's security state and ending a user's sessions
// (editor and above, as disable-mfa; the role table gates
// /api/v1/admin/users):
//
//	GET  /admin/users/:collection/:id/security -> {totp_enabled, recovery_codes_left, passkeys, oauth2, sessions_valid_after}
//	POST /admin/users/:collection/:id/logout   -> {sessions_valid_after}
//
// The logout raises the account's token floor through the log: every
// token issued at or before sessions_valid_after is refused on every node,
// and the user's realtime streams are closed. The audit middleware records
// it (users.logout).

func (s *Server) adminUserSecurity(w http.ResponseWriter, r *http.Request) {
	us, err := s.flows.UserSecurity(r.Context(), chi.URLParam(r, "collection"), chi.URLParam(r, "id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, us)
}

func (s *Server) adminLogoutUser(w http.ResponseWriter, r *http.Request) {
	out, idx, err := s.flows.LogoutUser(r.Context(), chi.URLParam(r, "collection"), chi.URLParam(r, "id"))
	setIndex(w, idx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, out)
}
