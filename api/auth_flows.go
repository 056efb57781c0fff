package api

import (
	"context"
	"net/http"

	"github.com/go-chi/chi/v5"

	"svcd/engine"
	"svcd/engine/auth"
)

// The auth flows beyond password sign-in (docs/auth.md): password reset,
// email verification, email OTP, TOTP with recovery codes, MFA tickets,
// anonymous accounts and promote, and the admin's disable-mfa and
// impersonation.
//
//	POST /auth/:collection/request-password-reset   {email}            -> {sent: true}
//	POST /auth/:collection/confirm-password-reset   {token, password}  -> {reset: true}
//	POST /auth/:collection/request-verification     {email}            -> {sent: true}
//	POST /auth/:collection/confirm-verification     {token}            -> {verified: true}
//	POST /auth/:collection/request-email-change     {new_email} (user token) -> {sent: true}
//	POST /auth/:collection/confirm-email-change     {token, password}  -> {changed: true}
//	POST /auth/:collection/otp/request              {email}            -> {sent: true}
//	POST /auth/:collection/otp/auth                 {token} | {code, email} -> {token, record} | {mfa_required, mfa_token}
//	POST /auth/:collection/login/mfa                {mfa_token, code | recovery_code} -> {token, record}
//	POST /auth/:collection/anonymous                                    -> {token, record}
//	POST /auth/:collection/promote                  {email, password, ...}  (guest token) -> {token, record}
//	POST /auth/:collection/totp/setup               (user token)       -> {secret, otpauth_url}
//	POST /auth/:collection/totp/confirm             {code}             -> {enabled: true, recovery_codes}
//	POST /auth/:collection/totp/disable             {code} | {recovery_code} -> {enabled: false}
//	POST /auth/:collection/totp/recovery/regenerate                     -> {recovery_codes}
//	GET  /auth/:collection/totp/recovery/status                         -> {total, remaining}
//	POST /admin/users/:collection/:id/disable-mfa   (admin, editor)    -> {enabled: false}
//	GET  /admin/users/:collection/:id/security      (admin, editor)    -> {totp_enabled, ..., sessions_valid_after}
//	POST /admin/users/:collection/:id/logout        (admin, editor)    -> {sessions_valid_after}
//	POST /admin/impersonate/:collection/:userId     (admin, editor)    -> {token, record, impersonated_by}

// AuthFlows is what these handlers need (engine/auth).
type AuthFlows interface {
	RequestPasswordReset(ctx context.Context, coll, email string) error
	ConfirmPasswordReset(ctx context.Context, coll, token, password string) (uint64, error)
	RequestVerification(ctx context.Context, coll, email string) error
	ConfirmVerification(ctx context.Context, coll, token string) (uint64, error)
	RequestEmailChange(ctx context.Context, p engine.Principal, coll, newEmail string) error
	ConfirmEmailChange(ctx context.Context, coll, token, password string) (uint64, error)
	RequestOTP(ctx context.Context, coll, email string) error
	AuthWithOTP(ctx context.Context, coll string, in auth.OTPAuth) (*auth.UserSession, uint64, error)
	SignInAnonymous(ctx context.Context, coll string) (*auth.UserSession, uint64, error)
	Promote(ctx context.Context, p engine.Principal, coll string, body []byte) (*auth.UserSession, uint64, error)
	Impersonate(ctx context.Context, admin engine.Principal, coll, id string) (*auth.UserSession, error)
	// An admin's view of a user's security state, and ending every
	// session of a user (admin_users.go).
	UserSecurity(ctx context.Context, coll, id string) (*auth.UserSecurity, error)
	LogoutUser(ctx context.Context, coll, id string) (*auth.UserLogout, uint64, error)
}

// SecondFactors is what the TOTP, recovery code and MFA handlers need
// (engine/auth).
type SecondFactors interface {
	LoginMFA(ctx context.Context, coll, ticket, code, recovery string) (*auth.UserSession, uint64, error)
	SetupTOTP(ctx context.Context, p engine.Principal, coll string) (*auth.TOTPSetup, uint64, error)
	ConfirmTOTP(ctx context.Context, p engine.Principal, coll, code string) (*auth.TOTPEnabled, uint64, error)
	DisableTOTP(ctx context.Context, p engine.Principal, coll, code, recovery string) (uint64, error)
	RegenerateRecoveryCodes(ctx context.Context, p engine.Principal, coll string) ([]string, uint64, error)
	RecoveryCodesStatus(ctx context.Context, p engine.Principal, coll string) (*auth.RecoveryStatus, error)
	AdminDisableMFA(ctx context.Context, coll, id string) (uint64, error)
}

// mountAuthFlowsOpen mounts the flows that take no credentials.
func (s *Server) mountAuthFlowsOpen(r chi.Router) {
	r.Post("/auth/{collection}/request-password-reset", s.requestPasswordReset)
	r.Post("/auth/{collection}/confirm-password-reset", s.confirmPasswordReset)
	r.Post("/auth/{collection}/request-verification", s.requestVerification)
	r.Post("/auth/{collection}/confirm-verification", s.confirmVerification)
	r.Post("/auth/{collection}/confirm-email-change", s.confirmEmailChange)
	r.Post("/auth/{collection}/otp/request", s.requestOTP)
	r.Post("/auth/{collection}/otp/auth", s.otpAuth)
	r.Post("/auth/{collection}/login/mfa", s.loginMFA)
	r.Post("/auth/{collection}/anonymous", s.anonymous)
}

// mountAuthFlows mounts the flows that act for the signed-in user. An
// anonymous caller is refused (401) before a handler reads its body.
func (s *Server) mountAuthFlows(r chi.Router) {
	r = r.With(s.requireSignedIn)
	r.Post("/auth/{collection}/promote", s.promote)
	r.Post("/auth/{collection}/request-email-change", s.requestEmailChange)
	r.Post("/auth/{collection}/totp/setup", s.totpSetup)
	r.Post("/auth/{collection}/totp/confirm", s.totpConfirm)
	r.Post("/auth/{collection}/totp/disable", s.totpDisable)
	r.Post("/auth/{collection}/totp/recovery/regenerate", s.recoveryRegenerate)
	r.Get("/auth/{collection}/totp/recovery/status", s.recoveryStatus)
}

type emailBody struct {
	Email string `json:"email"`
}

type codeBody struct {
	Code         string `json:"code"`
	RecoveryCode string `json:"recovery_code"`
}

// sent is the answer of every request that may send mail.
var sent = map[string]bool{"sent": true}

func (s *Server) requestPasswordReset(w http.ResponseWriter, r *http.Request) {
	var in emailBody
	if err := s.decodeJSON(w, r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := s.flows.RequestPasswordReset(r.Context(), chi.URLParam(r, "collection"), in.Email); err != nil {
		s.writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, sent)
}

func (s *Server) confirmPasswordReset(w http.ResponseWriter, r *http.Request) {
	s.confirmWithPassword(w, r, s.flows.ConfirmPasswordReset, "reset")
}

// confirmWithPassword serves the confirmation of a mailed token that
// carries a password ({token, password}: a password reset, an email
// change) and answers {done: true}. The change ends the account's older
// sessions: on every node before the answer.
func (s *Server) confirmWithPassword(w http.ResponseWriter, r *http.Request,
	confirm func(ctx context.Context, coll, token, password string) (uint64, error), done string) {
	var in struct {
		Token    string `json:"token"`
		Password string `json:"password"`
	}
	if err := s.decodeJSON(w, r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	idx, err := confirm(r.Context(), chi.URLParam(r, "collection"), in.Token, in.Password)
	setIndex(w, idx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.awaitEveryone(r.Context(), idx)
	writeData(w, http.StatusOK, map[string]bool{done: true})
}

func (s *Server) requestVerification(w http.ResponseWriter, r *http.Request) {
	var in emailBody
	if err := s.decodeJSON(w, r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := s.flows.RequestVerification(r.Context(), chi.URLParam(r, "collection"), in.Email); err != nil {
		s.writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, sent)
}

func (s *Server) confirmVerification(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Token string `json:"token"`
	}
	if err := s.decodeJSON(w, r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	idx, err := s.flows.ConfirmVerification(r.Context(), chi.URLParam(r, "collection"), in.Token)
	setIndex(w, idx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, map[string]bool{"verified": true})
}

func (s *Server) requestOTP(w http.ResponseWriter, r *http.Request) {
	var in emailBody
	if err := s.decodeJSON(w, r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := s.flows.RequestOTP(r.Context(), chi.URLParam(r, "collection"), in.Email); err != nil {
		s.writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, sent)
}

func (s *Server) otpAuth(w http.ResponseWriter, r *http.Request) {
	var in auth.OTPAuth
	if err := s.decodeJSON(w, r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	sess, idx, err := s.flows.AuthWithOTP(r.Context(), chi.URLParam(r, "collection"), in)
	s.writeSession(w, r, sess, idx, err)
}

func (s *Server) loginMFA(w http.ResponseWriter, r *http.Request) {
	var in struct {
		MFAToken string `json:"mfa_token"`
		codeBody
	}
	if err := s.decodeJSON(w, r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	sess, idx, err := s.factors.LoginMFA(r.Context(), chi.URLParam(r, "collection"), in.MFAToken, in.Code, in.RecoveryCode)
	s.writeSession(w, r, sess, idx, err)
}

func (s *Server) anonymous(w http.ResponseWriter, r *http.Request) {
	sess, idx, err := s.flows.SignInAnonymous(r.Context(), chi.URLParam(r, "collection"))
	s.writeSession(w, r, sess, idx, err)
}

func (s *Server) promote(w http.ResponseWriter, r *http.Request) {
	body, err := s.readBody(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	sess, idx, err := s.flows.Promote(r.Context(), principal(r), chi.URLParam(r, "collection"), body)
	if err == nil {
		// The guest token is revoked: on every node before the answer.
		s.awaitEveryone(r.Context(), idx)
	}
	s.writeSession(w, r, sess, idx, err)
}

// writeSession answers a sign-in: the session with its cookie, or the MFA
// ticket (no cookie).
func (s *Server) writeSession(w http.ResponseWriter, r *http.Request, sess *auth.UserSession, idx uint64, err error) {
	setIndex(w, idx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if !sess.MFARequired {
		s.setAuthCookie(w, userCookie, sess.Token, int(sess.TTL.Seconds()))
	}
	writeData(w, http.StatusOK, sess)
}

func (s *Server) totpSetup(w http.ResponseWriter, r *http.Request) {
	out, idx, err := s.factors.SetupTOTP(r.Context(), principal(r), chi.URLParam(r, "collection"))
	setIndex(w, idx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, out)
}

func (s *Server) totpConfirm(w http.ResponseWriter, r *http.Request) {
	var in codeBody
	if err := s.decodeJSON(w, r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	out, idx, err := s.factors.ConfirmTOTP(r.Context(), principal(r), chi.URLParam(r, "collection"), in.Code)
	setIndex(w, idx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, out)
}

func (s *Server) totpDisable(w http.ResponseWriter, r *http.Request) {
	var in codeBody
	if err := s.decodeJSON(w, r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	idx, err := s.factors.DisableTOTP(r.Context(), principal(r), chi.URLParam(r, "collection"), in.Code, in.RecoveryCode)
	setIndex(w, idx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, map[string]bool{"enabled": false})
}

func (s *Server) recoveryRegenerate(w http.ResponseWriter, r *http.Request) {
	codes, idx, err := s.factors.RegenerateRecoveryCodes(r.Context(), principal(r), chi.URLParam(r, "collection"))
	setIndex(w, idx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, map[string]any{"recovery_codes": codes})
}

func (s *Server) recoveryStatus(w http.ResponseWriter, r *http.Request) {
	st, err := s.factors.RecoveryCodesStatus(r.Context(), principal(r), chi.URLParam(r, "collection"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, st)
}

func (s *Server) adminDisableMFA(w http.ResponseWriter, r *http.Request) {
	idx, err := s.factors.AdminDisableMFA(r.Context(), chi.URLParam(r, "collection"), chi.URLParam(r, "id"))
	setIndex(w, idx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, map[string]bool{"enabled": false})
}

func (s *Server) impersonate(w http.ResponseWriter, r *http.Request) {
	sess, err := s.flows.Impersonate(r.Context(), principal(r), chi.URLParam(r, "collection"), chi.URLParam(r, "userId"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, sess)
}
