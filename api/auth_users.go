package api

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/go-chi/chi/v5"

	"svcd/engine"
	"svcd/engine/auth"
)

// UserAuth is what user sign-up, sign-in and sessions need (engine/auth).
type UserAuth interface {
	Register(ctx context.Context, p engine.Principal, coll string, body []byte) (*engine.Record, uint64, error)
	LoginUser(ctx context.Context, coll, email, password, ip string) (*auth.UserSession, error)
	Refresh(ctx context.Context, p engine.Principal) (*auth.RefreshedSession, uint64, error)
	Logout(ctx context.Context, p engine.Principal) (uint64, error)
	LockoutEnabled() bool
}

const userCookie = "svc_user_token"

// mountUserAuthOpen mounts the sign-in routes, which take no credentials:
// a stale token sent along must not stop a client from getting a fresh one.
func (s *Server) mountUserAuthOpen(r chi.Router) {
	r.Post("/auth/{collection}/login", s.userLogin)
}

// mountUserAuth mounts the routes that act for the caller.
func (s *Server) mountUserAuth(r chi.Router) {
	r.Post("/auth/{collection}/register", s.register)
	r.Get("/auth/me", s.me)
	r.Post("/auth/refresh", s.refresh)
	r.Post("/auth/logout", s.logout)
}

func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	body, err := s.readBody(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	rec, idx, err := s.users.Register(r.Context(), recordCaller(r), chi.URLParam(r, "collection"), body)
	setIndex(w, idx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var out struct {
		ID    string `json:"id"`
		Email string `json:"email"`
	}
	if err := json.Unmarshal(rec.JSON, &out); err != nil {
		s.writeError(w, r, err)
		return
	}
	writeData(w, http.StatusCreated, out)
}

func (s *Server) userLogin(w http.ResponseWriter, r *http.Request) {
	c, ok := s.signInCredentials(w, r)
	if !ok {
		return
	}
	sess, err := s.users.LoginUser(r.Context(), chi.URLParam(r, "collection"), c.Email, c.Password, s.clientIP(r))
	// A session with its cookie, or the MFA ticket (api/auth_flows.go).
	s.writeSession(w, r, sess, 0, err)
}

func (s *Server) me(w http.ResponseWriter, r *http.Request) {
	m, err := auth.WhoAmI(principal(r))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, m)
}

func (s *Server) refresh(w http.ResponseWriter, r *http.Request) {
	p := principal(r)
	sess, idx, err := s.users.Refresh(r.Context(), p)
	setIndex(w, idx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.awaitEveryone(r.Context(), idx)
	name := userCookie
	if p.IsAdmin() {
		name = adminCookie
	}
	s.setAuthCookie(w, name, sess.Token, int(sess.TTL.Seconds()))
	writeData(w, http.StatusOK, sess)
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	idx, err := s.users.Logout(r.Context(), principal(r))
	setIndex(w, idx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.awaitEveryone(r.Context(), idx)
	s.setAuthCookie(w, userCookie, "", -1)
	s.setAuthCookie(w, adminCookie, "", -1)
	writeData(w, http.StatusOK, map[string]any{"logged_out": true})
}

// signInCredentials reads a sign-in body and, with the lockout on, first
// catches up with the cluster (lockoutBarrier); it answers the error
// itself and reports false on failure.
func (s *Server) signInCredentials(w http.ResponseWriter, r *http.Request) (credentials, bool) {
	var c credentials
	if err := s.decodeJSON(w, r, &c); err != nil {
		s.writeError(w, r, err)
		return c, false
	}
	if err := s.lockoutBarrier(r); err != nil {
		s.writeError(w, r, err)
		return c, false
	}
	return c, true
}

// lockoutBarrier makes a sign-in see every failure counted anywhere in the
// cluster before it: with the lockout on, this node first catches up with
// the leader's commit index (a strong read), so failures spread over nodes
// lock the account on all of them.
func (s *Server) lockoutBarrier(r *http.Request) error {
	if !s.users.LockoutEnabled() {
		return nil
	}
	ctx, cancel := context.WithTimeout(r.Context(), readWait)
	defer cancel()
	idx, err := s.node.ReadIndex(ctx)
	if err != nil {
		return err
	}
	if err := s.node.WaitIndex(ctx, idx); err != nil {
		return errReadTimeout
	}
	return nil
}
