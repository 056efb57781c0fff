package pbimport

import (
	"context"
	"fmt"
	"strings"

	"svcd/engine"
	"svcd/engine/schema"
	"svcd/fsm"
)

// AdminRow is another system's operator account to import as an svcd
// admin (a PocketBase superuser): its email, its password hash as that
// system stored it (bcrypt; argon2id on the first sign-in, as any admin's
// bcrypt hash) and its times (Unix seconds; Updated 0 means Created).
type AdminRow struct {
	Email        string `json:"email"`
	PasswordHash string `json:"password_hash"`
	Created      int64  `json:"created"`
	Updated      int64  `json:"updated"`
}

// adminsCmd is command 161's payload: admins to create with one role,
// ids chosen by the proposer.
type adminsCmd struct {
	Role   string      `json:"role"`
	Admins []cmdAdmin  `json:"admins"`
	Pre    []RowFailed `json:"pre,omitempty"`
}

type cmdAdmin struct {
	ID      string `json:"id"`
	Email   string `json:"email"`
	Hash    string `json:"hash"`
	Created int64  `json:"created"`
	Updated int64  `json:"updated"`
}

// evAdmins is the event the auth module rebuilds its admin cache on.
const evAdmins = engine.EvAdmins

var adminEmail = &schema.Field{Name: "email", Type: schema.FieldEmail, Required: true}

// ImportAdmins creates admins with the given role (developer when empty)
// from rows, keeping their password hashes, in one command. An admin
// whose email exists is left as it is and listed as skipped (an import
// run twice changes nothing the second time); the answer lists emails.
// The role may not exceed the caller's (the route admits owners only).
func (m *Import) ImportAdmins(ctx context.Context, p engine.Principal, role string, rows []AdminRow) (*Result, uint64, error) {
	if len(rows) == 0 || len(rows) > MaxRows {
		return nil, 0, engine.ValidationError(map[string]string{"admins": fmt.Sprintf("must hold 1 to %d admins", MaxRows)})
	}
	if role == "" {
		role = engine.RoleDeveloper.String()
	}
	r := engine.ParseRole(role)
	if r == engine.RoleNone {
		return nil, 0, engine.FieldError("role", "must be viewer, editor, developer or owner")
	}
	if r > p.Role {
		return nil, 0, &engine.Error{Kind: engine.KindForbidden, Message: "You cannot grant a role above your own"}
	}
	cmd := adminsCmd{Role: r.String()}
	seen := map[string]bool{}
	now := m.core.Now().Unix()
	for _, a := range rows {
		stored, msg := schema.NormalizeValue(adminEmail, a.Email)
		email, _ := stored.(string)
		fail := func(field, msg string) {
			cmd.Pre = append(cmd.Pre, RowFailed{ID: a.Email, Error: "Validation failed", Details: map[string]any{field: msg}})
		}
		switch key := strings.ToLower(email); {
		case msg != "":
			fail("email", msg)
		case seen[key]:
			fail("email", "is given twice")
		case !hasPrefix(a.PasswordHash, bcryptPrefixes):
			fail("password_hash", "must be a bcrypt ($2a$, $2b$, $2y$) or argon2id hash")
		case a.Created < 0 || a.Updated < 0:
			fail("created", "must be a Unix time")
		default:
			seen[key] = true
			c := cmdAdmin{ID: "adm_" + engine.NewID(), Email: email, Hash: a.PasswordHash, Created: a.Created, Updated: a.Updated}
			if c.Created == 0 {
				c.Created = now
			}
			if c.Updated < c.Created {
				c.Updated = c.Created
			}
			cmd.Admins = append(cmd.Admins, c)
		}
	}
	if len(cmd.Admins) == 0 {
		return &Result{Created: []string{}, Skipped: []string{}, Failed: cmd.Pre}, 0, nil
	}
	res, idx, err := m.core.Propose(ctx, cmdAdmins, cmd)
	if err != nil {
		return nil, idx, err
	}
	return res.(*Result), idx, nil
}

// applyAdmins creates each admin whose email (any case) is free.
func (m *Import) applyAdmins(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[adminsCmd](cmd)
	if err != nil {
		return nil, err
	}
	out := &Result{Created: []string{}, Skipped: []string{}, Failed: append([]RowFailed{}, c.Pre...)}
	for _, a := range c.Admins {
		var n int
		if err := tx.QueryRow(`SELECT count(*) FROM _svc_admins WHERE email = ? COLLATE NOCASE`, a.Email).Scan(&n); err != nil {
			return nil, err
		}
		if n > 0 {
			out.Skipped = append(out.Skipped, a.Email)
			continue
		}
		if _, err := tx.Exec(`INSERT INTO _svc_admins (id, email, password, role, created, updated) VALUES (?, ?, ?, ?, ?, ?)`,
			a.ID, a.Email, a.Hash, c.Role, a.Created, a.Updated); err != nil {
			return nil, err
		}
		out.Created = append(out.Created, a.Email)
		tx.Emit(fsm.Event{Kind: evAdmins, Subject: a.ID})
	}
	return out, nil
}
