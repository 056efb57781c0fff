package engine

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"strings"

	"svcd/engine/password"
	"svcd/engine/schema"
	"svcd/fsm"
)

// Account fields in record writes. The system fields of an auth record may
// be written through the records API (and batches); that must not be a way
// around the account flows:
//
//   - changing the password needs the current one, `oldPassword` (admins
//     excepted), and ends every session issued before the change
//     (password_reset_at, as a confirmed reset does);
//   - changing the email clears email_verified, unless an admin sets it in
//     the same change;
//   - the token of a deleted account does not come back when an account
//     is created again with the same, client-chosen, id (see
//     account_cleanup.go).
//
// The old password is verified on the proposing node (argon2id never runs
// inside the state machine); the command carries a digest of the hash it
// was verified against, and the change applies only if the account still
// has that hash.

var (
	errOldPasswordMissing = ValidationError(map[string]string{"oldPassword": "is required to change the password"})
	errOldPasswordWrong   = ValidationError(map[string]string{"oldPassword": "does not match the current password"})
)

// passwordDigest names a stored password hash without repeating it.
func passwordDigest(hash any) string {
	s, _ := hash.(string)
	if s == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:16])
}

// verifyOldPassword answers, for an update of record id of auth collection
// ci whose body changes the password, the digest of the password hash that
// `oldPassword` matched. Admins need no old password. The write rules are
// checked first, on this replica, so a caller who may not change the
// account learns nothing about its password; the state machine decides
// them again at apply.
func (rs *Records) verifyOldPassword(ctx context.Context, ci *Coll, id string, in map[string]any, admin bool, env *RuleEnv) (string, error) {
	if ci.Type != schema.TypeAuth || admin {
		return "", nil
	}
	if _, changes := in["password"]; !changes {
		return "", nil
	}
	old, _ := in["oldPassword"].(string)
	if old == "" {
		return "", errOldPasswordMissing
	}
	var hash any
	err := rs.e.store.View(ctx, func(r *fsm.Reader) error {
		err := r.QueryRow("SELECT password FROM "+ci.table+" WHERE id = ?", id).Scan(&hash)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		return rs.writeRuleErrorNow(r, ci, ci.UpdateRule, env, id)
	})
	if err != nil {
		return "", err
	}
	h, _ := hash.(string)
	if ok, _, err := password.VerifyAny(old, h); err != nil || !ok {
		return "", errOldPasswordWrong
	}
	return passwordDigest(h), nil
}

// writeRuleErrorNow is writeRuleError for a non-admin against this
// replica's committed state.
func (rs *Records) writeRuleErrorNow(r *fsm.Reader, ci *Coll, rule *string, env *RuleEnv, id string) error {
	if err := preWriteError(ci, rule, false); err != nil {
		return err
	}
	holds := func(rule *string) (bool, error) {
		set := rs.e.schema.Load()
		fenv := env.filterEnv()
		fenv.AuthField = set.authField
		cond, all, none := ruleSQL(ci, rule, false, set, fenv, nil)
		if all || none {
			return all, nil
		}
		var n int
		err := r.QueryRow("SELECT count(*) FROM "+ci.table+" AS _r WHERE "+cond.Where+" AND _r.id = ?", append(cond.Args, id)...).Scan(&n)
		return n > 0, err
	}
	if ok, err := holds(ci.ViewRule); err != nil || !ok {
		return FirstErr(err, ErrNotFound)
	}
	if ok, err := holds(rule); err != nil || !ok {
		return FirstErr(err, ErrForbidden)
	}
	return nil
}

// accountSets adds to an update of auth record old what a change of its
// account fields implies: the old-password precondition, the end of older
// sessions when the password changes, and an unverified email when the
// email changes (unless the change sets email_verified itself).
func accountSets(ci *Coll, old []any, c *recordUpdateCmd, sets []string, args []any) ([]string, []any, error) {
	if !c.Account || ci.Type != schema.TypeAuth {
		return sets, args, nil
	}
	if c.PasswordWas != "" && passwordDigest(old[ci.rowIndex("password")]) != c.PasswordWas {
		return nil, nil, errOldPasswordWrong
	}
	if _, ok := c.Values["password"]; ok {
		sets, args = append(sets, `"password_reset_at" = ?`), append(args, TokenFloorAfter(old[ci.rowIndex("password_reset_at")], c.Now))
	}
	email, changes := c.Values["email"].(string)
	_, setsVerified := c.Values["email_verified"]
	if changes && !setsVerified && !strings.EqualFold(email, AsString(old[ci.rowIndex("email")])) {
		sets = append(sets, `"email_verified" = 0`)
	}
	return sets, args, nil
}

// TokenFloorAfter is the token floor of an account after an event at now
// that ends all of its sessions, given its current floor (nil or 0: none):
// tokens issued in the current floor's second were dated one second after
// it (issueAfter), so the new floor covers that second too.
func TokenFloorAfter(current any, now int64) int64 {
	if f := AsInt64(current); f > 0 {
		return max(now, f+1)
	}
	return now
}
