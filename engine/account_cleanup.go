package engine

import "svcd/fsm"

// accountTables hold per-account auth state keyed by (coll, user_id):
// email OTPs, TOTP enrolments, recovery codes, MFA tickets.
var accountTables = [...]string{"_svc_otps", "_svc_totp", "_svc_recovery_codes", "_svc_mfa_tickets"}

// dropAccountState deletes the auth state of user id of auth collection
// collID, or of every user of it when id is "", in the apply transaction
// of the delete that removes them.
func dropAccountState(tx *fsm.Tx, collID, id string) error {
	for _, t := range accountTables {
		q, args := "DELETE FROM "+t+" WHERE coll = ?", []any{collID}
		if id != "" {
			q, args = q+" AND user_id = ?", append(args, id)
		}
		if _, err := tx.Exec(q, args...); err != nil {
			return err
		}
	}
	return nil
}
