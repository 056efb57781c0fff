package api

import (
	"context"
	"net/http"

	"github.com/go-chi/chi/v5"

	"svcd/engine"
	"svcd/engine/auth"
)

// OAuth2 sign-in (docs/auth.md "OAuth2"). The client owns the redirect:
// authorize answers the provider's URL, the provider sends the user back
// to the client's redirect URI with a code, and the client exchanges it.
//
//	GET    /auth/:collection/oauth2/providers                      -> [{name, display_name, pkce}]
//	GET    /auth/:collection/oauth2/authorize?provider&redirectUri[&state][&use_pkce=1 | &code_challenge] -> {authorize_url, state}
//	POST   /auth/:collection/oauth2/exchange      {provider, code, redirectUri, state?, code_verifier?}
//	                                              -> {token, record, meta} | {merge_required, merge_token, ...} | {mfa_required, mfa_token}
//	POST   /auth/:collection/oauth2/merge-confirm {merge_token, password?} (or a session of the account) -> {token, record, meta}
//	DELETE /auth/:collection/oauth2/:provider/unlink (user token)  -> 204

// OAuth2Flows is what these handlers need (engine/auth).
type OAuth2Flows interface {
	Providers(ctx context.Context, coll string) ([]auth.ProviderInfo, error)
	Authorize(ctx context.Context, coll string, in auth.AuthorizeRequest) (*auth.Authorization, uint64, error)
	Exchange(ctx context.Context, p engine.Principal, coll string, in auth.ExchangeRequest) (*auth.OAuth2Result, uint64, error)
	MergeConfirm(ctx context.Context, p engine.Principal, coll string, in auth.MergeRequest, ip string) (*auth.OAuth2Result, uint64, error)
	Unlink(ctx context.Context, p engine.Principal, coll, provider string) (uint64, error)
}

// mountOAuth2 mounts the OAuth2 routes (in the group that resolves the
// caller: a user's own token links the identity at exchange and proves
// the account at merge-confirm; unlink needs it).
func (s *Server) mountOAuth2(r chi.Router) {
	if s.oauth2 == nil {
		return
	}
	r.Get("/auth/{collection}/oauth2/providers", s.oauth2Providers)
	r.Get("/auth/{collection}/oauth2/authorize", s.oauth2Authorize)
	r.Post("/auth/{collection}/oauth2/exchange", s.oauth2Exchange)
	r.Post("/auth/{collection}/oauth2/merge-confirm", s.oauth2MergeConfirm)
	r.With(s.requireSignedIn).Delete("/auth/{collection}/oauth2/{provider}/unlink", s.oauth2Unlink)
}

func (s *Server) oauth2Providers(w http.ResponseWriter, r *http.Request) {
	list, err := s.oauth2.Providers(r.Context(), chi.URLParam(r, "collection"))
	s.answer(w, r, http.StatusOK, list, 0, err)
}

func (s *Server) oauth2Authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	in := auth.AuthorizeRequest{
		Provider: q.Get("provider"), RedirectURI: q.Get("redirectUri"), State: q.Get("state"),
		UsePKCE: q.Get("use_pkce") == "1" || q.Get("use_pkce") == "true", CodeChallenge: q.Get("code_challenge"),
		CodeChallengeMethod: q.Get("code_challenge_method"),
	}
	out, idx, err := s.oauth2.Authorize(r.Context(), chi.URLParam(r, "collection"), in)
	setIndex(w, idx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeData(w, http.StatusOK, out)
}

func (s *Server) oauth2Exchange(w http.ResponseWriter, r *http.Request) {
	var in auth.ExchangeRequest
	if err := s.decodeJSON(w, r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	out, idx, err := s.oauth2.Exchange(r.Context(), principal(r), chi.URLParam(r, "collection"), in)
	s.writeOAuth2(w, r, out, idx, err)
}

func (s *Server) oauth2MergeConfirm(w http.ResponseWriter, r *http.Request) {
	var in auth.MergeRequest
	if err := s.decodeJSON(w, r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	// The merge token may have been made through another node: catch up
	// with the leader before reading it.
	if err := s.catchUp(r); err != nil {
		s.writeError(w, r, err)
		return
	}
	out, idx, err := s.oauth2.MergeConfirm(r.Context(), principal(r), chi.URLParam(r, "collection"), in, s.clientIP(r))
	s.writeOAuth2(w, r, out, idx, err)
}

func (s *Server) oauth2Unlink(w http.ResponseWriter, r *http.Request) {
	idx, err := s.oauth2.Unlink(r.Context(), principal(r), chi.URLParam(r, "collection"), chi.URLParam(r, "provider"))
	setIndex(w, idx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// writeOAuth2 answers an exchange or a merge-confirm: a session sets the
// user cookie; a merge token or an MFA ticket does not.
func (s *Server) writeOAuth2(w http.ResponseWriter, r *http.Request, out *auth.OAuth2Result, idx uint64, err error) {
	setIndex(w, idx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if out.UserSession != nil && !out.MFARequired {
		s.setAuthCookie(w, userCookie, out.Token, int(out.TTL.Seconds()))
	}
	w.Header().Set("Cache-Control", "no-store")
	writeData(w, http.StatusOK, out)
}

// catchUp makes this node's replica hold every write the leader has
// committed (a strong read's barrier).
func (s *Server) catchUp(r *http.Request) error {
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
