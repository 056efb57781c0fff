package pbcompat

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/go-chi/chi/v5"

	"svcd/engine"
	"svcd/engine/auth"
	"svcd/engine/schema"
)

// The auth routes of an auth collection (pb:apis/record_auth.go), on
// svcd's account flows. _superusers is svcd's admins: its sign-in is the
// admin login, and the record answered is PocketBase's superuser shape.

// UserAuth is what the sign-in and refresh routes need (api.UserAuth's
// methods).
type UserAuth interface {
	LoginUser(ctx context.Context, coll, email, password, ip string) (*auth.UserSession, error)
	Refresh(ctx context.Context, p engine.Principal) (*auth.RefreshedSession, uint64, error)
}

// AuthFlows is what the mailed flows and the one-time codes need
// (api.AuthFlows's methods).
type AuthFlows interface {
	RequestPasswordReset(ctx context.Context, coll, email string) error
	ConfirmPasswordReset(ctx context.Context, coll, token, password string) (uint64, error)
	RequestVerification(ctx context.Context, coll, email string) error
	ConfirmVerification(ctx context.Context, coll, token string) (uint64, error)
	RequestEmailChange(ctx context.Context, p engine.Principal, coll, newEmail string) error
	ConfirmEmailChange(ctx context.Context, coll, token, password string) (uint64, error)
	RequestOTP(ctx context.Context, coll, email string) error
	AuthWithOTP(ctx context.Context, coll string, in auth.OTPAuth) (*auth.UserSession, uint64, error)
}

// AdminAuth is the admin sign-in, for _superusers (api.AdminAuth's).
type AdminAuth interface {
	LoginAdmin(ctx context.Context, email, password string, client auth.ClientInfo) (*auth.AdminSession, error)
}

// OAuth2Flows lists a collection's OAuth2 providers, for auth-methods
// (api.OAuth2Flows's).
type OAuth2Flows interface {
	Providers(ctx context.Context, coll string) ([]auth.ProviderInfo, error)
}

// Superusers is PocketBase's collection of superusers: its name, and the
// id the SDK takes as the mark of a superuser (svcd admin tokens carry it
// as collectionId, engine/token).
const (
	Superusers   = "_superusers"
	SuperusersID = "pbc_3142635823"
)

// mountAuth registers the auth routes.
func mountAuth(r chi.Router, d *Deps) {
	base := "/api/collections/{collection}/"
	r.Get(base+"auth-methods", d.authMethods)
	r.Post(base+"auth-with-password", d.authWithPassword)
	r.With(RequireAuth).Post(base+"auth-refresh", d.authRefresh)
	r.Post(base+"request-otp", d.requestOTP)
	r.Post(base+"auth-with-otp", d.authWithOTP)
	r.Post(base+"request-password-reset", d.requestPasswordReset)
	r.Post(base+"confirm-password-reset", d.confirmPasswordReset)
	r.Post(base+"request-verification", d.requestVerification)
	r.Post(base+"confirm-verification", d.confirmVerification)
	r.With(RequireAuth).Post(base+"request-email-change", d.requestEmailChange)
	r.Post(base+"confirm-email-change", d.confirmEmailChange)
}

// authCollection resolves the path's collection, which must be an auth
// collection (PocketBase answers 404 otherwise). _superusers resolves to
// nil with ok true.
func (d *Deps) authCollection(w http.ResponseWriter, r *http.Request) (*schema.Collection, bool) {
	name := chi.URLParam(r, "collection")
	if name == Superusers || name == SuperusersID {
		return nil, true
	}
	c, err := d.Coll(name)
	if err != nil || c.Type != schema.TypeAuth {
		WriteError(w, r, NewError(http.StatusNotFound, "Missing or invalid auth collection context.", nil))
		return nil, false
	}
	return c, true
}

// readInto decodes the JSON body into v (400 on a malformed body).
func (d *Deps) readInto(w http.ResponseWriter, r *http.Request, v any) bool {
	var body []byte
	var err error
	if d.ReadBody != nil {
		body, err = d.ReadBody(w, r)
	} else {
		err = errNoBody
	}
	if err == nil && len(body) > 0 {
		err = json.Unmarshal(body, v)
	}
	if err != nil {
		WriteError(w, r, NewError(http.StatusBadRequest, "", nil))
		return false
	}
	return true
}

var errNoBody = NewError(http.StatusBadRequest, "", nil)

// signInError is a failed sign-in as PocketBase answers it: 400 "Failed to
// authenticate." (wrong credentials, a feature turned off); a lockout
// keeps its 429 and Retry-After.
func signInError(err error) error {
	e := engine.AsError(err)
	if e != nil && (e.Kind == engine.KindUnauthorized || e.Kind == engine.KindValidation) {
		return NewError(http.StatusBadRequest, MsgFailedAuth, nil)
	}
	return FromEngine(err)
}

type passwordSignIn struct {
	Identity string `json:"identity"`
	Password string `json:"password"`
}

func (d *Deps) authWithPassword(w http.ResponseWriter, r *http.Request) {
	c, ok := d.authCollection(w, r)
	if !ok {
		return
	}
	var in passwordSignIn
	if !d.readInto(w, r, &in) {
		return
	}
	if in.Identity == "" || in.Password == "" {
		data := map[string]any{}
		for k, v := range map[string]string{"identity": in.Identity, "password": in.Password} {
			if v == "" {
				data[k] = FieldError{Code: "validation_required", Message: "Cannot be blank."}
			}
		}
		WriteError(w, r, NewError(http.StatusBadRequest, MsgValidation, data))
		return
	}
	if c == nil {
		sess, err := d.AdminAuth.LoginAdmin(r.Context(), in.Identity, in.Password,
			auth.ClientInfo{IP: d.clientIP(r), UserAgent: r.UserAgent()})
		if err != nil {
			WriteError(w, r, signInError(err))
			return
		}
		WriteJSON(w, http.StatusOK, map[string]any{"token": sess.Token, "record": SuperuserOut(sess.Admin)})
		return
	}
	sess, err := d.UserAuth.LoginUser(r.Context(), c.Name, in.Identity, in.Password, d.clientIP(r))
	if err != nil {
		WriteError(w, r, signInError(err))
		return
	}
	d.writeUserSession(w, r, c, sess.Token, sess.Record, sess.MFARequired, sess.MFAToken)
}

// writeUserSession answers {token, record} (pb:apis/record_helpers.go
// RecordAuthResponse), or, when the account needs its second factor,
// PocketBase's 401 {mfaId} with svcd's MFA ticket as the id.
func (d *Deps) writeUserSession(w http.ResponseWriter, r *http.Request, c *schema.Collection, tok string, record json.RawMessage, mfa bool, ticket string) {
	if mfa {
		WriteJSON(w, http.StatusUnauthorized, map[string]any{"mfaId": ticket})
		return
	}
	var id struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(record, &id)
	owner := engine.Principal{Kind: engine.User, ID: id.ID, Collection: c.Name}
	rec, err := RecordOut(d.Catalog, c, record, owner)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	WriteJSON(w, http.StatusOK, map[string]any{"token": tok, "record": rec})
}

// SuperuserOut is an admin as PocketBase's _superusers record.
func SuperuserOut(a *auth.Admin) map[string]any {
	if a == nil {
		return map[string]any{}
	}
	return map[string]any{
		"id": a.ID, "collectionId": SuperusersID, "collectionName": Superusers,
		"email": a.Email, "emailVisibility": false, "verified": true,
		"created": FormatDate(a.Created), "updated": FormatDate(a.Updated),
	}
}

// authRefresh issues a new token for the caller's session, which must
// belong to the path's collection (PocketBase's
// RequireSameCollectionContextAuth). svcd revokes the old token.
func (d *Deps) authRefresh(w http.ResponseWriter, r *http.Request) {
	c, ok := d.authCollection(w, r)
	if !ok {
		return
	}
	p := Principal(r)
	// An admin's session (not an API token, which has no claims) on
	// _superusers; a user of this collection on its own path.
	same := c == nil && p.IsAdmin() && p.Claims != nil ||
		c != nil && p.Kind == engine.User && (p.Collection == c.Name || p.Collection == c.ID)
	if !same {
		WriteError(w, r, NewError(http.StatusForbidden, "The request can be accessed only by the authenticated record from the same collection.", nil))
		return
	}
	sess, idx, err := d.UserAuth.Refresh(r.Context(), p)
	SetIndex(w, idx)
	if err != nil {
		WriteError(w, r, FromEngine(err))
		return
	}
	if c == nil {
		WriteJSON(w, http.StatusOK, map[string]any{"token": sess.Token, "record": SuperuserOut(sess.Admin)})
		return
	}
	d.writeUserSession(w, r, c, sess.Token, sess.Record, false, "")
}
