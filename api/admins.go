package api

import (
	"context"
	"net/http"

	"github.com/go-chi/chi/v5"

	"svcd/engine"
	"svcd/engine/auth"
)

// AdminManager is what the admin, API token, session and audit log routes
// need (engine/auth).
type AdminManager interface {
	Admins() []*auth.Admin
	AdminByID(id string) *auth.Admin
	CreateAdmin(ctx context.Context, caller engine.Principal, email, password, role string) (*auth.Admin, uint64, error)
	UpdateAdmin(ctx context.Context, caller engine.Principal, id string, p auth.AdminPatch) (*auth.Admin, uint64, error)
	DeleteAdmin(ctx context.Context, id string) (uint64, error)
	LogoutAllAdmins(ctx context.Context) (uint64, error)
	AdminSessions(ctx context.Context) ([]auth.AdminSessionInfo, error)
	RevokeAdminSession(ctx context.Context, jti string) (uint64, error)
	MintAPIToken(ctx context.Context, caller engine.Principal, name string, scopes []string, ttlSeconds int64) (*auth.MintedToken, uint64, error)
	APITokens() []*auth.APIToken
	DeleteAPIToken(ctx context.Context, id string) (uint64, error)
	AuditLog(ctx context.Context, q auth.AuditQuery) (*auth.AuditPage, error)
}

// mountAdmins mounts admin management, API tokens, security and the audit
// log (the role table gates each).
func (s *Server) mountAdmins(r chi.Router) {
	r.Get("/admin/admins", s.listAdmins)
	r.Post("/admin/admins", s.createAdmin)
	r.Patch("/admin/admins/{id}", s.updateAdmin)
	r.Delete("/admin/admins/{id}", s.deleteAdmin)
	r.Get("/admin/api-tokens", s.listAPITokens)
	r.Post("/admin/api-tokens", s.mintAPIToken)
	r.Delete("/admin/api-tokens/{id}", s.deleteAPIToken)
	r.Get("/admin/security/sessions", s.listAdminSessions)
	r.Delete("/admin/security/sessions/{jti}", s.revokeAdminSession)
	r.Post("/admin/security/force-logout-all", s.forceLogoutAll)
	r.Get("/admin/security/fingerprints", s.fingerprints)
	r.Get("/admin/audit-log", s.auditLog)
	r.Post("/admin/users/{collection}/{id}/disable-mfa", s.adminDisableMFA)
	r.Get("/admin/users/{collection}/{id}/security", s.adminUserSecurity)
	r.Post("/admin/users/{collection}/{id}/logout", s.adminLogoutUser)
	r.Post("/admin/impersonate/{collection}/{userId}", s.impersonate)
}

func (s *Server) listAdmins(w http.ResponseWriter, r *http.Request) {
	writeData(w, http.StatusOK, s.admins.Admins())
}

func (s *Server) createAdmin(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Email    string `json:"email"`
		Password string `json:"password"`
		Role     string `json:"role"`
	}
	if err := s.decodeJSON(w, r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	a, idx, err := s.admins.CreateAdmin(r.Context(), principal(r), in.Email, in.Password, in.Role)
	setIndex(w, idx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeData(w, http.StatusCreated, a)
}

func (s *Server) updateAdmin(w http.ResponseWriter, r *http.Request) {
	var in auth.AdminPatch
	if err := s.decodeJSON(w, r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	a, idx, err := s.admins.UpdateAdmin(r.Context(), principal(r), chi.URLParam(r, "id"), in)
	setIndex(w, idx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if in.Password != nil || in.Role != nil {
		s.awaitEveryone(r.Context(), idx)
	}
	writeData(w, http.StatusOK, a)
}

func (s *Server) deleteAdmin(w http.ResponseWriter, r *http.Request) {
	idx, err := s.admins.DeleteAdmin(r.Context(), chi.URLParam(r, "id"))
	s.revoked(w, r, idx, err)
}

// revoked answers a write that takes credentials away (a deleted admin or
// token, a revoked session): 204 once every reachable member applied it.
func (s *Server) revoked(w http.ResponseWriter, r *http.Request, idx uint64, err error) {
	setIndex(w, idx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.awaitEveryone(r.Context(), idx)
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) listAPITokens(w http.ResponseWriter, r *http.Request) {
	writeData(w, http.StatusOK, s.admins.APITokens())
}

func (s *Server) mintAPIToken(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Name       string   `json:"name"`
		Scopes     []string `json:"scopes"`
		TTLSeconds int64    `json:"ttl_seconds"`
	}
	if err := s.decodeJSON(w, r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	t, idx, err := s.admins.MintAPIToken(r.Context(), principal(r), in.Name, in.Scopes, in.TTLSeconds)
	setIndex(w, idx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeData(w, http.StatusCreated, t)
}

func (s *Server) deleteAPIToken(w http.ResponseWriter, r *http.Request) {
	idx, err := s.admins.DeleteAPIToken(r.Context(), chi.URLParam(r, "id"))
	s.revoked(w, r, idx, err)
}

func (s *Server) listAdminSessions(w http.ResponseWriter, r *http.Request) {
	list, err := s.admins.AdminSessions(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, list)
}

func (s *Server) revokeAdminSession(w http.ResponseWriter, r *http.Request) {
	idx, err := s.admins.RevokeAdminSession(r.Context(), chi.URLParam(r, "jti"))
	s.revoked(w, r, idx, err)
}

func (s *Server) forceLogoutAll(w http.ResponseWriter, r *http.Request) {
	idx, err := s.admins.LogoutAllAdmins(r.Context())
	setIndex(w, idx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.awaitEveryone(r.Context(), idx)
	s.setAuthCookie(w, adminCookie, "", -1)
	writeData(w, http.StatusOK, map[string]any{"logged_out": true})
}

func (s *Server) fingerprints(w http.ResponseWriter, r *http.Request) {
	out := map[string]any{"jwt": nil, "encryption": nil}
	if s.prints != nil {
		jwt, enc := s.prints()
		out["jwt"] = jwt
		if enc != "" {
			out["encryption"] = enc
		}
	}
	writeData(w, http.StatusOK, out)
}
