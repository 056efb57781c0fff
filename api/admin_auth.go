package api

import (
	"context"
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	"svcd/engine"
	"svcd/engine/auth"
)

// AdminAuth is what admin setup and sign-in need (engine/auth).
type AdminAuth interface {
	HasAdmin() bool
	SetupAdmin(ctx context.Context, email, password string, client auth.ClientInfo) (*auth.AdminSession, uint64, error)
	LoginAdmin(ctx context.Context, email, password string, client auth.ClientInfo) (*auth.AdminSession, error)
}

const adminCookie = "svc_admin_token"

func (s *Server) mountAdminAuth(r chi.Router) {
	r.Get("/admin/setup/status", s.setupStatus)
	r.Post("/admin/setup", s.setup)
	r.Post("/admin/auth/login", s.adminLogin)
}

func (s *Server) setupStatus(w http.ResponseWriter, r *http.Request) {
	has := s.adminAuth.HasAdmin()
	writeData(w, http.StatusOK, map[string]any{
		"has_admin":          has,
		"needs_setup":        !has,
		"setup_key_required": s.setupKey != "",
	})
}

type credentials struct {
	Email    string `json:"email"`
	Password string `json:"password"`
}

func (s *Server) setup(w http.ResponseWriter, r *http.Request) {
	if s.setupKey != "" {
		got := r.Header.Get("X-Setup-Key")
		if subtle.ConstantTimeCompare([]byte(got), []byte(s.setupKey)) != 1 {
			s.writeError(w, r, engine.Errorf(engine.KindForbidden, "A valid X-Setup-Key header is required"))
			return
		}
	}
	var c credentials
	if err := s.decodeJSON(w, r, &c); err != nil {
		s.writeError(w, r, err)
		return
	}
	sess, idx, err := s.adminAuth.SetupAdmin(r.Context(), c.Email, c.Password, s.clientInfo(r))
	setIndex(w, idx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.setAuthCookie(w, adminCookie, sess.Token, int(sess.TTL.Seconds()))
	writeData(w, http.StatusCreated, sess)
}

func (s *Server) adminLogin(w http.ResponseWriter, r *http.Request) {
	c, ok := s.signInCredentials(w, r)
	if !ok {
		return
	}
	sess, err := s.adminAuth.LoginAdmin(r.Context(), c.Email, c.Password, s.clientInfo(r))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.setAuthCookie(w, adminCookie, sess.Token, int(sess.TTL.Seconds()))
	writeData(w, http.StatusOK, sess)
}

// clientInfo is what a session records of the client.
func (s *Server) clientInfo(r *http.Request) auth.ClientInfo {
	return auth.ClientInfo{IP: s.clientIP(r), UserAgent: r.UserAgent()}
}

// setAuthCookie sets an HttpOnly, SameSite=Lax session cookie; Secure when
// the public URL is https.
func (s *Server) setAuthCookie(w http.ResponseWriter, name, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{
		Name: name, Value: value, Path: "/", MaxAge: maxAge, HttpOnly: true,
		SameSite: http.SameSiteLaxMode,
		Secure:   strings.HasPrefix(strings.ToLower(s.settings.Setting("app.url")), "https://"),
	})
}
