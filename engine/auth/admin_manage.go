package auth

import (
	"context"
	"slices"
	"strings"

	"svcd/engine"
	"svcd/engine/password"
	"svcd/engine/schema"
	"svcd/fsm"
)

// Admin management: list, create, update (email, password, role) and
// delete, with the role rules of SPEC.md checked where they cannot race:
// the last owner can be neither demoted nor deleted, decided when the
// command is applied.

var (
	errLastOwner    = &engine.Error{Kind: engine.KindConflict, Message: "The last owner can be neither demoted nor deleted"}
	errRoleTooHigh  = &engine.Error{Kind: engine.KindForbidden, Message: "You cannot grant a role above your own"}
	errAdminUnknown = &engine.Error{Kind: engine.KindNotFound, Message: "Admin not found"}
)

// Admins lists every admin, by email.
func (ad *Admins) Admins() []*Admin {
	set := ad.au.admins.Load()
	out := make([]*Admin, 0, len(set.byID))
	for _, a := range set.byID {
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b *Admin) int { return strings.Compare(strings.ToLower(a.Email), strings.ToLower(b.Email)) })
	return out
}

// CreateAdmin adds an admin; role defaults to editor and may not exceed
// the caller's.
func (ad *Admins) CreateAdmin(ctx context.Context, caller engine.Principal, email, plain, role string) (*Admin, uint64, error) {
	cmd, verr := ad.prepareAdmin(email, plain, role, false)
	if verr != nil {
		return nil, 0, verr
	}
	if engine.ParseRole(cmd.Role) > caller.Role {
		return nil, 0, errRoleTooHigh
	}
	_, idx, err := ad.au.core.Propose(ctx, cmdAdminCreate, cmd)
	if err != nil {
		return nil, idx, err
	}
	return ad.AdminByID(cmd.ID), idx, nil
}

// AdminPatch is a change to an admin; nil members stay.
type AdminPatch struct {
	Email    *string `json:"email"`
	Password *string `json:"password"`
	Role     *string `json:"role"`
}

type adminUpdateCmd struct {
	ID    string  `json:"id"`
	Email *string `json:"email,omitempty"`
	Hash  *string `json:"hash,omitempty"`
	Role  *string `json:"role,omitempty"`
	Now   int64   `json:"now"`
}

// UpdateAdmin changes an admin's email, password or role. A new password
// signs the admin out everywhere; a role may not exceed the caller's.
func (ad *Admins) UpdateAdmin(ctx context.Context, caller engine.Principal, id string, p AdminPatch) (*Admin, uint64, error) {
	if ad.AdminByID(id) == nil {
		return nil, 0, errAdminUnknown
	}
	cmd := adminUpdateCmd{ID: id, Now: ad.au.core.Now().Unix()}
	d := map[string]string{}
	if p.Email != nil {
		stored, msg := schema.NormalizeValue(emailField, *p.Email)
		if msg != "" {
			d["email"] = msg
		}
		s, _ := stored.(string)
		cmd.Email = &s
	}
	if p.Role != nil {
		r := engine.ParseRole(*p.Role)
		switch {
		case r == engine.RoleNone:
			d["role"] = "must be viewer, editor, developer or owner"
		case r > caller.Role:
			return nil, 0, errRoleTooHigh
		}
		cmd.Role = p.Role
	}
	if p.Password != nil {
		if msg := ad.au.core.Records().CheckPasswordPolicy(*p.Password); msg != "" {
			d["password"] = msg
		}
	}
	if len(d) > 0 {
		return nil, 0, engine.ValidationError(d)
	}
	if p.Password != nil {
		h, err := password.Hash(*p.Password, ad.au.core.PasswordParams())
		if err != nil {
			return nil, 0, engine.Errorf(engine.KindInternal, "could not hash the password")
		}
		cmd.Hash = &h
	}
	_, idx, err := ad.au.core.Propose(ctx, cmdAdminUpdate, cmd)
	if err != nil {
		return nil, idx, err
	}
	return ad.AdminByID(id), idx, nil
}

type adminDeleteCmd struct {
	ID string `json:"id"`
}

// DeleteAdmin removes an admin; its tokens stop working at once.
func (ad *Admins) DeleteAdmin(ctx context.Context, id string) (uint64, error) {
	if ad.AdminByID(id) == nil {
		return 0, errAdminUnknown
	}
	_, idx, err := ad.au.core.Propose(ctx, cmdAdminDelete, adminDeleteCmd{ID: id})
	return idx, err
}

type adminsLogoutCmd struct {
	Now int64 `json:"now"`
}

// LogoutAllAdmins refuses every admin token issued until now.
func (ad *Admins) LogoutAllAdmins(ctx context.Context) (uint64, error) {
	_, idx, err := ad.au.core.Propose(ctx, cmdAdminsLogout, adminsLogoutCmd{Now: ad.au.core.Now().Unix()})
	return idx, err
}

// otherOwners counts the owners other than id, inside the transaction.
func otherOwners(tx *fsm.Tx, id string) (int, error) {
	var n int
	err := tx.QueryRow(`SELECT count(*) FROM _svc_admins WHERE role = 'owner' AND id <> ?`, id).Scan(&n)
	return n, err
}

func (ad *Admins) applyAdminUpdate(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[adminUpdateCmd](cmd)
	if err != nil {
		return nil, err
	}
	var role string
	if err := tx.QueryRow(`SELECT role FROM _svc_admins WHERE id = ?`, c.ID).Scan(&role); err != nil {
		return nil, errAdminUnknown
	}
	if c.Role != nil && role == engine.RoleOwner.String() && *c.Role != role {
		if n, err := otherOwners(tx, c.ID); err != nil || n == 0 {
			return nil, engine.FirstErr(err, errLastOwner)
		}
	}
	if c.Email != nil {
		if _, err := tx.Exec(`UPDATE _svc_admins SET email = ? WHERE id = ?`, *c.Email, c.ID); err != nil {
			if engine.IsUniqueViolation(err) {
				return nil, engine.FieldError("email", "an admin with this email already exists")
			}
			return nil, err
		}
	}
	if c.Role != nil {
		if _, err := tx.Exec(`UPDATE _svc_admins SET role = ? WHERE id = ?`, *c.Role, c.ID); err != nil {
			return nil, err
		}
	}
	if c.Hash != nil {
		if _, err := tx.Exec(`UPDATE _svc_admins SET password = ?, tokens_after = ? WHERE id = ?`, *c.Hash, c.Now, c.ID); err != nil {
			return nil, err
		}
		if _, err := tx.Exec(`DELETE FROM _svc_admin_sessions WHERE admin_id = ?`, c.ID); err != nil {
			return nil, err
		}
	}
	if _, err := tx.Exec(`UPDATE _svc_admins SET updated = max(updated, ?) WHERE id = ?`, c.Now, c.ID); err != nil {
		return nil, err
	}
	tx.Emit(fsm.Event{Kind: evAdmins, Subject: c.ID})
	return nil, nil
}

func (ad *Admins) applyAdminDelete(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[adminDeleteCmd](cmd)
	if err != nil {
		return nil, err
	}
	var role string
	if err := tx.QueryRow(`SELECT role FROM _svc_admins WHERE id = ?`, c.ID).Scan(&role); err != nil {
		return nil, errAdminUnknown
	}
	if role == engine.RoleOwner.String() {
		if n, err := otherOwners(tx, c.ID); err != nil || n == 0 {
			return nil, engine.FirstErr(err, errLastOwner)
		}
	}
	for _, q := range []string{`DELETE FROM _svc_admins WHERE id = ?`, `DELETE FROM _svc_admin_sessions WHERE admin_id = ?`,
		`DELETE FROM _svc_api_tokens WHERE admin_id = ?`} {
		if _, err := tx.Exec(q, c.ID); err != nil {
			return nil, err
		}
	}
	tx.Emit(fsm.Event{Kind: evAdmins, Subject: c.ID})
	tx.Emit(fsm.Event{Kind: evAPITokens})
	return nil, nil
}

func (ad *Admins) applyAdminsLogout(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[adminsLogoutCmd](cmd)
	if err != nil {
		return nil, err
	}
	if _, err := tx.Exec(`UPDATE _svc_admins SET tokens_after = ?`, c.Now); err != nil {
		return nil, err
	}
	if _, err := tx.Exec(`DELETE FROM _svc_admin_sessions`); err != nil {
		return nil, err
	}
	tx.Emit(fsm.Event{Kind: evAdmins})
	return nil, nil
}
