package auth

import (
	"context"
	"fmt"

	"svcd/engine"
	"svcd/fsm"
)

// An admin ends every session of a user (POST
// /admin/users/:collection/:id/logout). Users' sessions are stateless
// tokens, so the command raises the account's token floor
// (password_reset_at, as a confirmed password reset does): Authenticate
// refuses every token issued at or before it, on every node once the
// command is applied there. The update is a record change of the auth
// collection, so the user's open realtime streams are closed with it
// (CredentialsTouched). The next sign-in is dated after the floor
// (issueAfter).

const cmdUserLogout fsm.Type = 166

// userLogoutCmd carries the proposer's clock: apply reads no clock.
type userLogoutCmd struct {
	Coll   string `json:"coll"`
	UserID string `json:"user_id"`
	Now    int64  `json:"now"`
}

// UserLogout is the answer of LogoutUser: the account's new token floor
// (unix seconds); tokens issued at or before it are refused.
type UserLogout struct {
	SessionsValidAfter int64 `json:"sessions_valid_after"`
}

// registerUserLogout wires the command and its result.
func (au *Auth) registerUserLogout() {
	engine.RegisterResult[UserLogout](au.core, "auth.user_logout")
	au.core.Command(cmdUserLogout, "auth.user_logout", au.applyUserLogout)
}

// LogoutUser ends every session of user id of auth collection name. It
// returns the new token floor and the log index of the change. 404 for an
// unknown user or a collection that is not an auth collection (as the
// admin's disable-mfa).
func (au *Auth) LogoutUser(ctx context.Context, name, id string) (*UserLogout, uint64, error) {
	ci, err := au.authCollection(name)
	if err != nil {
		return nil, 0, err
	}
	row, err := au.userByID(ctx, ci, id)
	if err != nil {
		return nil, 0, err
	}
	if row == nil {
		return nil, 0, errUserNotFound
	}
	res, idx, err := au.core.Propose(ctx, cmdUserLogout, userLogoutCmd{Coll: ci.ID, UserID: id, Now: au.core.Now().Unix()})
	if err != nil {
		return nil, idx, err
	}
	out, ok := res.(*UserLogout)
	if !ok {
		return nil, idx, fmt.Errorf("user logout: unexpected result %T", res)
	}
	return out, idx, nil
}

func (au *Auth) applyUserLogout(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[userLogoutCmd](cmd)
	if err != nil {
		return nil, err
	}
	ci, err := au.authCollForApply(tx, c.Coll)
	if err != nil {
		return nil, err
	}
	row, err := userRowTx(tx, ci, c.UserID)
	if err != nil {
		return nil, err
	}
	if row == nil {
		return nil, errUserNotFound
	}
	// Above the current floor even when the proposer's clock is behind
	// the last one's, so the command always ends the sessions it saw.
	floor := engine.TokenFloorAfter(row[ci.RowIndex("password_reset_at")], c.Now)
	if _, err := au.setUserColumns(tx, ci, c.UserID, c.Now, []string{"password_reset_at = ?"}, []any{floor}); err != nil {
		return nil, fmt.Errorf("user logout: %w", err)
	}
	return &UserLogout{SessionsValidAfter: floor}, nil
}
