package pbcompat

import (
	"encoding/base64"
	"net/http"
	"strings"

	"svcd/engine/auth"
	"svcd/engine/schema"
)

// The mailed flows and one-time codes of an auth collection, on svcd's
// (engine/auth). PocketBase answers 204 to every request and confirm; a
// request answers the same whether or not the account exists.

// otpDuration is how long svcd's one-time codes live (auth-methods'
// otp.duration, seconds).
const otpDuration = 600

// otpIDPrefix marks an otpId: the address the code was sent to, encoded
// (svcd's codes are looked up by address; the id is not a secret, the
// code is).
const otpIDPrefix = "otp_"

func otpID(email string) string {
	return otpIDPrefix + base64.RawURLEncoding.EncodeToString([]byte(strings.TrimSpace(email)))
}

func otpEmail(id string) (string, bool) {
	rest, ok := strings.CutPrefix(id, otpIDPrefix)
	if !ok {
		return "", false
	}
	b, err := base64.RawURLEncoding.DecodeString(rest)
	return string(b), err == nil && len(b) > 0
}

type emailBody struct {
	Email string `json:"email"`
}

// requireEmail answers PocketBase's 400 for a blank email.
func requireEmail(w http.ResponseWriter, r *http.Request, email string) bool {
	if strings.TrimSpace(email) == "" {
		WriteError(w, r, NewError(http.StatusBadRequest, MsgValidation,
			map[string]any{"email": FieldError{Code: "validation_required", Message: "Cannot be blank."}}))
		return false
	}
	return true
}

// flowColl is authCollection for the flows, which _superusers does not
// have in svcd (admins reset passwords through the CLI).
func (d *Deps) flowColl(w http.ResponseWriter, r *http.Request) (string, bool) {
	c, ok := d.authCollection(w, r)
	if ok && c == nil {
		WriteError(w, r, NewError(http.StatusNotFound, "", nil))
		return "", false
	}
	if !ok {
		return "", false
	}
	return c.Name, true
}

func (d *Deps) requestOTP(w http.ResponseWriter, r *http.Request) {
	coll, ok := d.flowColl(w, r)
	var in emailBody
	if !ok || !d.readInto(w, r, &in) || !requireEmail(w, r, in.Email) {
		return
	}
	if err := d.AuthFlows.RequestOTP(r.Context(), coll, in.Email); err != nil {
		WriteError(w, r, FromEngine(err))
		return
	}
	WriteJSON(w, http.StatusOK, map[string]any{"otpId": otpID(in.Email)})
}

type otpSignIn struct {
	OTPID    string `json:"otpId"`
	Password string `json:"password"`
}

func (d *Deps) authWithOTP(w http.ResponseWriter, r *http.Request) {
	c, ok := d.authCollection(w, r)
	if ok && c == nil {
		WriteError(w, r, NewError(http.StatusNotFound, "", nil))
		return
	}
	var in otpSignIn
	if !ok || !d.readInto(w, r, &in) {
		return
	}
	email, valid := otpEmail(in.OTPID)
	if !valid || in.Password == "" {
		WriteError(w, r, NewError(http.StatusBadRequest, MsgFailedAuth, nil))
		return
	}
	sess, idx, err := d.AuthFlows.AuthWithOTP(r.Context(), c.Name, auth.OTPAuth{Email: email, Code: in.Password})
	SetIndex(w, idx)
	if err != nil {
		WriteError(w, r, signInError(err))
		return
	}
	d.writeUserSession(w, r, c, sess.Token, sess.Record, sess.MFARequired, sess.MFAToken)
}

func (d *Deps) requestPasswordReset(w http.ResponseWriter, r *http.Request) {
	coll, ok := d.flowColl(w, r)
	var in emailBody
	if !ok || !d.readInto(w, r, &in) || !requireEmail(w, r, in.Email) {
		return
	}
	noContent(w, r, 0, d.AuthFlows.RequestPasswordReset(r.Context(), coll, in.Email))
}

type passwordResetConfirm struct {
	Token           string `json:"token"`
	Password        string `json:"password"`
	PasswordConfirm string `json:"passwordConfirm"`
}

func (d *Deps) confirmPasswordReset(w http.ResponseWriter, r *http.Request) {
	coll, ok := d.flowColl(w, r)
	var in passwordResetConfirm
	if !ok || !d.readInto(w, r, &in) {
		return
	}
	if in.PasswordConfirm != in.Password {
		WriteError(w, r, NewError(http.StatusBadRequest, MsgValidation,
			map[string]any{"passwordConfirm": FieldError{Code: "validation_values_mismatch", Message: "Values don't match."}}))
		return
	}
	idx, err := d.AuthFlows.ConfirmPasswordReset(r.Context(), coll, in.Token, in.Password)
	noContent(w, r, idx, err)
}

func (d *Deps) requestVerification(w http.ResponseWriter, r *http.Request) {
	coll, ok := d.flowColl(w, r)
	var in emailBody
	if !ok || !d.readInto(w, r, &in) || !requireEmail(w, r, in.Email) {
		return
	}
	noContent(w, r, 0, d.AuthFlows.RequestVerification(r.Context(), coll, in.Email))
}

func (d *Deps) confirmVerification(w http.ResponseWriter, r *http.Request) {
	coll, ok := d.flowColl(w, r)
	var in struct {
		Token string `json:"token"`
	}
	if !ok || !d.readInto(w, r, &in) {
		return
	}
	idx, err := d.AuthFlows.ConfirmVerification(r.Context(), coll, in.Token)
	noContent(w, r, idx, err)
}

// noContent answers 204, or err in PocketBase's envelope.
func noContent(w http.ResponseWriter, r *http.Request, idx uint64, err error) {
	SetIndex(w, idx)
	if err != nil {
		WriteError(w, r, FromEngine(err))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// authMethods answers PocketBase's auth-methods
// (pb:apis/record_auth_methods.go), legacy members included: which
// sign-ins the collection offers. svcd's OAuth2 authorizations are made by
// /api/v1/auth/:c/oauth2/authorize, so the providers carry no state or
// authURL here (the SDK's code exchange does not need them).
func (d *Deps) authMethods(w http.ResponseWriter, r *http.Request) {
	c, ok := d.authCollection(w, r)
	if !ok {
		return
	}
	opts := *schema.DefaultAuthOptions()
	if c != nil && c.AuthOptions != nil {
		opts = *c.AuthOptions
	}
	if c == nil { // _superusers: svcd admins sign in with a password only
		opts.OTP, opts.OAuth2 = false, false
	}
	otp := map[string]any{"enabled": false, "duration": 0}
	if opts.OTP && d.settingOn("auth.otp.enabled") {
		otp = map[string]any{"enabled": true, "duration": otpDuration}
	}
	oauth2 := opts.OAuth2 && d.settingOn("auth.oauth2.enabled")
	providers := []map[string]any{}
	if oauth2 && d.OAuth2 != nil {
		if list, err := d.OAuth2.Providers(r.Context(), c.Name); err == nil {
			for _, p := range list {
				providers = append(providers, map[string]any{"name": p.Name, "displayName": p.DisplayName,
					"state": "", "authURL": "", "authUrl": "", "codeVerifier": "", "codeChallenge": "", "codeChallengeMethod": ""})
			}
		}
	}
	var legacyProviders any // PocketBase answers null while OAuth2 is off
	if oauth2 {
		legacyProviders = providers
	}
	WriteJSON(w, http.StatusOK, map[string]any{
		"password": map[string]any{"enabled": opts.Password, "identityFields": identityFields(opts.Password)},
		"oauth2":   map[string]any{"enabled": oauth2, "providers": providers},
		"mfa":      map[string]any{"enabled": false, "duration": 0},
		"otp":      otp,
		// PocketBase's legacy members (v0.22 clients).
		"authProviders":    legacyProviders,
		"usernamePassword": false,
		"emailPassword":    opts.Password,
	})
}

// identityFields: svcd signs in by email only.
func identityFields(enabled bool) []string {
	if !enabled {
		return []string{}
	}
	return []string{"email"}
}

// settingOn reads a boolean setting as the engine does ("1" or "true").
func (d *Deps) settingOn(key string) bool {
	if d.Settings == nil {
		return false
	}
	switch strings.ToLower(strings.TrimSpace(d.Settings.Setting(key))) {
	case "1", "true":
		return true
	}
	return false
}
