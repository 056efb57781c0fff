package auth

import (
	"context"

	"svcd/engine"
	"svcd/fsm"
)

// UserSecurity is an admin's view of a user's security state (GET
// /admin/users/:collection/:id/security): the factors the account has and
// its token floor. It names no secret. The login lockout is not in it: it
// counts failures per email and client IP, not per account.
type UserSecurity struct {
	// TOTPEnabled: TOTP is confirmed (a pending setup counts as off).
	TOTPEnabled bool `json:"totp_enabled"`
	// RecoveryCodesLeft: unused recovery codes (0 while TOTP is off).
	RecoveryCodesLeft int `json:"recovery_codes_left"`
	// Passkeys: registered passkeys.
	Passkeys int `json:"passkeys"`
	// OAuth2: the providers linked to the account, sorted.
	OAuth2 []string `json:"oauth2"`
	// SessionsValidAfter: tokens issued at or before this time (unix
	// seconds; a password reset, an admin's logout) are refused; 0: none.
	SessionsValidAfter int64 `json:"sessions_valid_after"`
}

// UserSecurity reads the security state of user id of auth collection name
// from this node's replica. 404 for an unknown user or a collection that
// is not an auth collection.
func (au *Auth) UserSecurity(ctx context.Context, name, id string) (*UserSecurity, error) {
	ci, err := au.authCollection(name)
	if err != nil {
		return nil, err
	}
	row, err := au.userByID(ctx, ci, id)
	if err != nil {
		return nil, err
	}
	if row == nil {
		return nil, errUserNotFound
	}
	us := &UserSecurity{OAuth2: []string{}, SessionsValidAfter: engine.AsInt64(row[ci.RowIndex("password_reset_at")])}
	err = au.core.Store().View(ctx, func(r *fsm.Reader) error {
		err := r.QueryRow(`SELECT
			EXISTS (SELECT 1 FROM _svc_totp WHERE coll = ?1 AND user_id = ?2 AND enabled = 1),
			(SELECT count(*) FROM _svc_recovery_codes c WHERE c.coll = ?1 AND c.user_id = ?2 AND c.used_at = 0
				AND EXISTS (SELECT 1 FROM _svc_totp t WHERE t.coll = ?1 AND t.user_id = ?2 AND t.enabled = 1)),
			(SELECT count(*) FROM _svc_webauthn_credentials WHERE coll = ?1 AND user_id = ?2)`,
			ci.ID, id).Scan(&us.TOTPEnabled, &us.RecoveryCodesLeft, &us.Passkeys)
		if err != nil {
			return err
		}
		rows, err := r.Query(`SELECT provider FROM _svc_oauth2_links WHERE coll = ? AND user_id = ? ORDER BY provider`, ci.ID, id)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var p string
			if err := rows.Scan(&p); err != nil {
				return err
			}
			us.OAuth2 = append(us.OAuth2, p)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return us, nil
}
