package auth

import (
	"database/sql"
	"errors"

	"svcd/engine"
	"svcd/fsm"
)

// Wrong second-factor codes are counted per account, not only per ticket
// or per emailed code: a sign-in issues a fresh MFA ticket every time, and
// a new email OTP replaces the last one, so caps per ticket alone leave an
// account open to a few guesses per sign-in, without end. TOTP codes,
// recovery codes and email OTP codes of one account share one budget of
// codeBudgetMax wrong codes per codeBudgetWindow, counted when the
// exchange commands are applied (on whichever node each attempt lands).
// Once spent, every code exchange of the account is refused with 429 (the
// right code included) until the window ends. A six-digit code then takes
// years of guessing, not hours.
//
// The window opens at the first wrong code and lasts codeBudgetWindow;
// rows are kept in _svc_code_failures, removed when their window has
// ended, and with the account.

const (
	codeBudgetMax    = 10
	codeBudgetWindow = 15 * 60 // seconds
)

// errCodesExhausted refuses a code exchange of an account whose budget is
// spent; retryAfter is when its window ends.
func errCodesExhausted(retryAfter int64) *engine.Error {
	return &engine.Error{Kind: engine.KindTooManyRequests, Message: "Too many wrong codes for this account; try again later",
		RetryAfter: int(max(retryAfter, 1))}
}

// codeBudgetOpen is nil while user uid of coll may still try a code at
// now, else errCodesExhausted.
func codeBudgetOpen(tx *fsm.Tx, coll, uid string, now int64) error {
	var failures, end int64
	err := tx.QueryRow(`SELECT failures, window_end FROM _svc_code_failures WHERE coll = ? AND user_id = ?`, coll, uid).Scan(&failures, &end)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return err
	case now >= end || failures < codeBudgetMax:
		return nil
	}
	return errCodesExhausted(end - now)
}

// codeFailed counts a wrong code of user uid of coll at now, opening a new
// window when the last one has ended, and removes the rows of every
// window that has.
func codeFailed(tx *fsm.Tx, coll, uid string, now int64) error {
	if _, err := tx.Exec(`DELETE FROM _svc_code_failures WHERE window_end <= ?`, now); err != nil {
		return err
	}
	_, err := tx.Exec(`INSERT INTO _svc_code_failures (coll, user_id, failures, window_end) VALUES (?, ?, 1, ?)
		ON CONFLICT (coll, user_id) DO UPDATE SET failures = failures + 1`, coll, uid, now+codeBudgetWindow)
	return err
}
