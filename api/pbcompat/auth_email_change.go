package pbcompat

import (
	"net/http"

	"svcd/engine/auth"
)

// PocketBase's email change (pb:apis/record_auth_email_change_request.go
// and _confirm.go) on svcd's flow (engine/auth): request-email-change
// {newEmail} by the signed-in account answers 204 and mails a token to the
// new address; confirm-email-change {token, password} answers 204. Errors
// are PocketBase's 400s with its field codes.

// Field errors of the email change, PocketBase's codes and messages.
var (
	errNewEmailTaken = FieldError{Code: "validation_invalid_new_email", Message: "Invalid new email address."}
	errNewEmailSame  = FieldError{Code: "validation_not_in_invalid", Message: "Must be a valid value."}
	errBadChangeTok  = FieldError{Code: "validation_invalid_token", Message: "Invalid or expired token."}
	errBadChangePass = FieldError{Code: "validation_invalid_password", Message: "Missing or invalid auth record password."}
)

// fieldFailure is PocketBase's 400 validation answer for one field.
func fieldFailure(field string, fe FieldError) *Error {
	return NewError(http.StatusBadRequest, MsgValidation, map[string]any{field: fe})
}

func (d *Deps) requestEmailChange(w http.ResponseWriter, r *http.Request) {
	coll, ok := d.flowColl(w, r)
	var in struct {
		NewEmail string `json:"newEmail"`
	}
	if !ok || !d.readInto(w, r, &in) {
		return
	}
	err := d.AuthFlows.RequestEmailChange(r.Context(), Principal(r), coll, in.NewEmail)
	switch {
	case auth.IsEmailChangeError(err, auth.ErrNewEmailTaken):
		WriteError(w, r, fieldFailure("newEmail", errNewEmailTaken))
	case auth.IsEmailChangeError(err, auth.ErrNewEmailSame):
		WriteError(w, r, fieldFailure("newEmail", errNewEmailSame))
	default:
		noContent(w, r, 0, renameField(err, "new_email", "newEmail"))
	}
}

func (d *Deps) confirmEmailChange(w http.ResponseWriter, r *http.Request) {
	coll, ok := d.flowColl(w, r)
	var in struct {
		Token    string `json:"token"`
		Password string `json:"password"`
	}
	if !ok || !d.readInto(w, r, &in) {
		return
	}
	idx, err := d.AuthFlows.ConfirmEmailChange(r.Context(), coll, in.Token, in.Password)
	SetIndex(w, idx)
	pe := FromEngine(err)
	switch {
	case err == nil:
		w.WriteHeader(http.StatusNoContent)
	case auth.IsEmailChangeError(err, auth.ErrEmailChangePassword):
		WriteError(w, r, fieldFailure("password", errBadChangePass))
	case auth.IsEmailChangeError(err, auth.ErrNewEmailTaken):
		// Taken between the request and the confirmation.
		WriteError(w, r, NewError(http.StatusBadRequest, "Failed to confirm email change.", nil))
	case pe.Status == http.StatusBadRequest && len(pe.Data) == 0: // svcd's "Invalid or expired token"
		WriteError(w, r, fieldFailure("token", errBadChangeTok))
	default:
		WriteError(w, r, pe)
	}
}

// renameField moves svcd's detail from one field name to PocketBase's.
func renameField(err error, from, to string) error {
	if err == nil {
		return nil
	}
	pe := FromEngine(err)
	if v, ok := pe.Data[from]; ok {
		delete(pe.Data, from)
		pe.Data[to] = v
	}
	return pe
}
