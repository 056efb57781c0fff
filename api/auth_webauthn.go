package api

import (
	"context"
	"net/http"

	"github.com/go-chi/chi/v5"

	"svcd/engine"
	"svcd/engine/auth"
)

// Passkeys (WebAuthn; docs/auth.md "Passkeys"). A ceremony is an options
// step and a verify step joined by a ticket; the two may reach different
// nodes.
//
//	POST   /auth/:collection/webauthn/register/options  (user token)       -> {options, ticket}
//	POST   /auth/:collection/webauthn/register/verify   {ticket, response, name?} -> passkey
//	POST   /auth/:collection/webauthn/login/options     {email?}           -> {options, ticket}
//	POST   /auth/:collection/webauthn/login/verify      {ticket, response} -> {token, record}
//	GET    /auth/:collection/webauthn/credentials       (user token)       -> [passkey]
//	PATCH  /auth/:collection/webauthn/credentials/:id   {name}             -> passkey
//	DELETE /auth/:collection/webauthn/credentials/:id                      -> 204

// Passkeys is what these handlers need (engine/auth).
type Passkeys interface {
	BeginPasskeyRegistration(ctx context.Context, p engine.Principal, coll string) (*auth.PasskeyCeremony, uint64, error)
	FinishPasskeyRegistration(ctx context.Context, p engine.Principal, coll string, in auth.PasskeyFinish) (*auth.Passkey, uint64, error)
	BeginPasskeyLogin(ctx context.Context, coll, email string) (*auth.PasskeyCeremony, uint64, error)
	FinishPasskeyLogin(ctx context.Context, coll string, in auth.PasskeyFinish) (*auth.UserSession, uint64, error)
	ListPasskeys(ctx context.Context, p engine.Principal, coll string) ([]auth.Passkey, error)
	RenamePasskey(ctx context.Context, p engine.Principal, coll, id, name string) (*auth.Passkey, uint64, error)
	DeletePasskey(ctx context.Context, p engine.Principal, coll, id string) (uint64, error)
}

// mountPasskeysOpen mounts the sign-in ceremony, which takes no
// credentials.
func (s *Server) mountPasskeysOpen(r chi.Router) {
	if s.passkeys == nil {
		return
	}
	r.Post("/auth/{collection}/webauthn/login/options", s.passkeyLoginOptions)
	r.Post("/auth/{collection}/webauthn/login/verify", s.passkeyLoginVerify)
}

// mountPasskeys mounts what a signed-in user does with their passkeys.
func (s *Server) mountPasskeys(r chi.Router) {
	if s.passkeys == nil {
		return
	}
	r = r.With(s.requireSignedIn)
	r.Post("/auth/{collection}/webauthn/register/options", s.passkeyRegisterOptions)
	r.Post("/auth/{collection}/webauthn/register/verify", s.passkeyRegisterVerify)
	r.Get("/auth/{collection}/webauthn/credentials", s.passkeyList)
	r.Patch("/auth/{collection}/webauthn/credentials/{id}", s.passkeyRename)
	r.Delete("/auth/{collection}/webauthn/credentials/{id}", s.passkeyDelete)
}

// latestTickets makes this replica current with the leader's commit
// index (a strong read), so a ticket stored through any node is here.
func (s *Server) latestTickets(ctx context.Context) error {
	idx, err := s.node.ReadIndex(ctx)
	if err != nil {
		return err
	}
	return s.node.WaitIndex(ctx, idx)
}

// writeCeremony answers an options step.
func (s *Server) writeCeremony(w http.ResponseWriter, r *http.Request, c *auth.PasskeyCeremony, idx uint64, err error) {
	setIndex(w, idx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, c)
}

func (s *Server) passkeyRegisterOptions(w http.ResponseWriter, r *http.Request) {
	c, idx, err := s.passkeys.BeginPasskeyRegistration(r.Context(), principal(r), chi.URLParam(r, "collection"))
	s.writeCeremony(w, r, c, idx, err)
}

func (s *Server) passkeyRegisterVerify(w http.ResponseWriter, r *http.Request) {
	var in auth.PasskeyFinish
	if err := s.decodeJSON(w, r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := s.latestTickets(r.Context()); err != nil {
		s.writeError(w, r, err)
		return
	}
	pk, idx, err := s.passkeys.FinishPasskeyRegistration(r.Context(), principal(r), chi.URLParam(r, "collection"), in)
	s.answer(w, r, http.StatusOK, pk, idx, err)
}

func (s *Server) passkeyLoginOptions(w http.ResponseWriter, r *http.Request) {
	var in emailBody
	if r.ContentLength != 0 {
		if err := s.decodeJSON(w, r, &in); err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	c, idx, err := s.passkeys.BeginPasskeyLogin(r.Context(), chi.URLParam(r, "collection"), in.Email)
	s.writeCeremony(w, r, c, idx, err)
}

func (s *Server) passkeyLoginVerify(w http.ResponseWriter, r *http.Request) {
	var in auth.PasskeyFinish
	if err := s.decodeJSON(w, r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := s.latestTickets(r.Context()); err != nil {
		s.writeError(w, r, err)
		return
	}
	sess, idx, err := s.passkeys.FinishPasskeyLogin(r.Context(), chi.URLParam(r, "collection"), in)
	s.writeSession(w, r, sess, idx, err)
}

func (s *Server) passkeyList(w http.ResponseWriter, r *http.Request) {
	list, err := s.passkeys.ListPasskeys(r.Context(), principal(r), chi.URLParam(r, "collection"))
	s.answer(w, r, http.StatusOK, list, 0, err)
}

func (s *Server) passkeyRename(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Name string `json:"name"`
	}
	if err := s.decodeJSON(w, r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	pk, idx, err := s.passkeys.RenamePasskey(r.Context(), principal(r), chi.URLParam(r, "collection"), chi.URLParam(r, "id"), in.Name)
	s.answer(w, r, http.StatusOK, pk, idx, err)
}

func (s *Server) passkeyDelete(w http.ResponseWriter, r *http.Request) {
	idx, err := s.passkeys.DeletePasskey(r.Context(), principal(r), chi.URLParam(r, "collection"), chi.URLParam(r, "id"))
	setIndex(w, idx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
