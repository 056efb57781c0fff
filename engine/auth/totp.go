package auth

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"svcd/engine"
	"svcd/engine/totp"
	"svcd/fsm"
)

// TOTP second factor (SPEC.md, Authentication 5): setup stores a pending
// secret (sealed, see sealTOTP); confirm with a code from the app turns it
// on and issues ten recovery codes, shown once; disable needs a current
// code or a recovery code. Each code's time step is accepted once per
// account: the last step used is stored and a step at or below it is
// refused, decided when the command is applied. Recovery codes are stored
// as keyed hashes and are single-use.

var (
	errTOTPOn      = &engine.Error{Kind: engine.KindConflict, Message: "TOTP is already enabled; disable it first"}
	errTOTPOff     = &engine.Error{Kind: engine.KindValidation, Message: "TOTP is not enabled"}
	errTOTPNoSetup = &engine.Error{Kind: engine.KindValidation, Message: "No TOTP setup is pending; call totp/setup first"}
	errTOTPMoved   = &engine.Error{Kind: engine.KindConflict, Message: "The TOTP setup changed meanwhile; confirm with the newest secret"}
	errBadCode     = &engine.Error{Kind: engine.KindValidation, Message: "Validation failed", Details: map[string]any{"code": "is not a valid code"}}
)

// TOTPSetup is the answer of totp/setup.
type TOTPSetup struct {
	Secret     string `json:"secret"`
	OTPAuthURL string `json:"otpauth_url"`
}

// TOTPEnabled is the answer of totp/confirm: the recovery codes appear
// here and in totp/recovery/regenerate only.
type TOTPEnabled struct {
	Enabled       bool     `json:"enabled"`
	RecoveryCodes []string `json:"recovery_codes"`
}

// RecoveryStatus counts an account's recovery codes.
type RecoveryStatus struct {
	Total     int `json:"total"`
	Remaining int `json:"remaining"`
}

// totpState is an account's TOTP row.
type totpState struct {
	sealed   string
	enabled  bool
	lastStep int64
}

func (fa *Factors) totpState(ctx context.Context, coll, uid string) (*totpState, error) {
	var st totpState
	var enabled int64
	err := fa.au.core.Store().View(ctx, func(r *fsm.Reader) error {
		return r.QueryRow(`SELECT secret, enabled, last_step FROM _svc_totp WHERE coll = ? AND user_id = ?`, coll, uid).
			Scan(&st.sealed, &enabled, &st.lastStep)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	st.enabled = enabled != 0
	return &st, nil
}

// totpEnabled reports whether the account has TOTP on, on this replica.
func (fa *Factors) totpEnabled(ctx context.Context, coll, uid string) (bool, error) {
	st, err := fa.totpState(ctx, coll, uid)
	return st != nil && st.enabled, err
}

func totpOnTx(tx *fsm.Tx, coll, uid string) (bool, error) {
	var enabled int64
	err := tx.QueryRow(`SELECT enabled FROM _svc_totp WHERE coll = ? AND user_id = ?`, coll, uid).Scan(&enabled)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return enabled != 0, err
}

// totpCaller resolves the collection, the feature switch and the caller
// for the TOTP endpoints; anonymous accounts have no second factor.
func (fa *Factors) totpCaller(ctx context.Context, p engine.Principal, name string) (*engine.Coll, []any, error) {
	ci, err := fa.au.authCollection(name)
	if err != nil {
		return nil, nil, err
	}
	if !fa.au.authFeature(ci, "mfa") {
		return nil, nil, errFeatureOff("MFA")
	}
	row, err := fa.au.ownUser(ctx, p, ci)
	if err != nil {
		return nil, nil, err
	}
	if asBool(row[ci.RowIndex("is_anonymous")]) {
		return nil, nil, errNoAnonymous
	}
	return ci, row, nil
}

type totpSetupCmd struct {
	Coll   string `json:"coll"`
	UserID string `json:"user_id"`
	Secret string `json:"secret"` // sealed
	Now    int64  `json:"now"`
}

// SetupTOTP makes a new secret for the caller, pending until confirmed.
// Calling it again replaces a pending secret; with TOTP on it is a 409.
func (fa *Factors) SetupTOTP(ctx context.Context, p engine.Principal, name string) (*TOTPSetup, uint64, error) {
	ci, row, err := fa.totpCaller(ctx, p, name)
	if err != nil {
		return nil, 0, err
	}
	uid := engine.AsString(row[0])
	account := strings.ReplaceAll(engine.AsString(row[ci.RowIndex("email")]), ":", "_")
	key, err := totp.Generate(strings.ReplaceAll(fa.au.appName(), ":", "_"), account)
	if err != nil {
		return nil, 0, err
	}
	sealed, err := fa.au.sealTOTP(ci.ID, uid, key.Secret)
	if err != nil {
		return nil, 0, err
	}
	_, idx, err := fa.au.core.Propose(ctx, cmdTOTPSetup, totpSetupCmd{Coll: ci.ID, UserID: uid, Secret: sealed, Now: fa.au.core.Now().Unix()})
	if err != nil {
		return nil, idx, err
	}
	return &TOTPSetup{Secret: key.Secret, OTPAuthURL: key.URL}, idx, nil
}

func (fa *Factors) applyTOTPSetup(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[totpSetupCmd](cmd)
	if err != nil {
		return nil, err
	}
	if on, err := totpOnTx(tx, c.Coll, c.UserID); err != nil || on {
		return nil, engine.FirstErr(err, errTOTPOn)
	}
	_, err = tx.Exec(`INSERT INTO _svc_totp (coll, user_id, secret, enabled, last_step, created, updated)
		VALUES (?, ?, ?, 0, 0, ?, ?)
		ON CONFLICT (coll, user_id) DO UPDATE SET secret = excluded.secret, enabled = 0, last_step = 0,
		updated = excluded.updated`, c.Coll, c.UserID, c.Secret, c.Now, c.Now)
	return nil, err
}

type totpConfirmCmd struct {
	Coll   string   `json:"coll"`
	UserID string   `json:"user_id"`
	Secret string   `json:"secret"` // the sealed secret the code was checked against
	Step   int64    `json:"step"`
	Hashes []string `json:"hashes"` // of the new recovery codes
	Now    int64    `json:"now"`
}

// newRecoveryCodes makes ten codes and their stored hashes.
func (fa *Factors) newRecoveryCodes() ([]string, []string, error) {
	codes, err := totp.GenerateRecoveryCodes()
	if err != nil {
		return nil, nil, err
	}
	key := fa.au.signer.DeriveKey(keyRecovery)
	hashes := make([]string, len(codes))
	for i, c := range codes {
		if hashes[i], err = totp.HashRecoveryCode(key, c); err != nil {
			return nil, nil, err
		}
	}
	return codes, hashes, nil
}

// ConfirmTOTP turns TOTP on with a code of the pending secret and returns
// the ten recovery codes (shown this once).
func (fa *Factors) ConfirmTOTP(ctx context.Context, p engine.Principal, name, code string) (*TOTPEnabled, uint64, error) {
	ci, row, err := fa.totpCaller(ctx, p, name)
	if err != nil {
		return nil, 0, err
	}
	if d := blankDetails("code", code); len(d) > 0 {
		return nil, 0, engine.ValidationError(d)
	}
	uid := engine.AsString(row[0])
	st, err := fa.totpState(ctx, ci.ID, uid)
	switch {
	case err != nil:
		return nil, 0, err
	case st == nil:
		return nil, 0, errTOTPNoSetup
	case st.enabled:
		return nil, 0, errTOTPOn
	}
	secret, err := fa.au.openTOTP(ci.ID, uid, st.sealed)
	if err != nil {
		return nil, 0, err
	}
	step, ok := totp.Match(code, secret, fa.au.core.Now())
	if !ok {
		return nil, 0, errBadCode
	}
	codes, hashes, err := fa.newRecoveryCodes()
	if err != nil {
		return nil, 0, err
	}
	_, idx, err := fa.au.core.Propose(ctx, cmdTOTPConfirm, totpConfirmCmd{
		Coll: ci.ID, UserID: uid, Secret: st.sealed, Step: step, Hashes: hashes, Now: fa.au.core.Now().Unix(),
	})
	if err != nil {
		return nil, idx, err
	}
	return &TOTPEnabled{Enabled: true, RecoveryCodes: codes}, idx, nil
}

func (fa *Factors) applyTOTPConfirm(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[totpConfirmCmd](cmd)
	if err != nil {
		return nil, err
	}
	var secret string
	var enabled, last int64
	err = tx.QueryRow(`SELECT secret, enabled, last_step FROM _svc_totp WHERE coll = ? AND user_id = ?`, c.Coll, c.UserID).
		Scan(&secret, &enabled, &last)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, errTOTPNoSetup
	case err != nil:
		return nil, err
	case enabled != 0:
		return nil, errTOTPOn
	case secret != c.Secret:
		return nil, errTOTPMoved
	case c.Step <= last:
		return nil, errBadCode
	}
	if _, err := tx.Exec(`UPDATE _svc_totp SET enabled = 1, last_step = ?, updated = max(updated, ?)
		WHERE coll = ? AND user_id = ?`, c.Step, c.Now, c.Coll, c.UserID); err != nil {
		return nil, err
	}
	return nil, replaceRecoveryCodes(tx, c.Coll, c.UserID, c.Hashes)
}

func replaceRecoveryCodes(tx *fsm.Tx, coll, uid string, hashes []string) error {
	if _, err := tx.Exec(`DELETE FROM _svc_recovery_codes WHERE coll = ? AND user_id = ?`, coll, uid); err != nil {
		return err
	}
	for _, h := range hashes {
		if _, err := tx.Exec(`INSERT INTO _svc_recovery_codes (coll, user_id, hash, used_at) VALUES (?, ?, ?, 0)
			ON CONFLICT DO NOTHING`, coll, uid, h); err != nil {
			return err
		}
	}
	return nil
}

// secondFactor is a checked second factor, as a command carries it: the
// time step of a valid TOTP code, or the hash of a recovery code (which
// may or may not be one of the account's: the apply decides).
type secondFactor struct {
	Step         int64  `json:"step,omitempty"`
	RecoveryHash string `json:"recovery_hash,omitempty"`
}

// checkFactor evaluates code (a TOTP code) or recovery (a recovery code)
// against the account's sealed secret. A wrong or malformed one gives the
// zero value, which no account accepts.
func (fa *Factors) checkFactor(coll, uid string, st *totpState, code, recovery string) secondFactor {
	if recovery != "" {
		h, err := totp.HashRecoveryCode(fa.au.signer.DeriveKey(keyRecovery), recovery)
		if err != nil {
			return secondFactor{}
		}
		return secondFactor{RecoveryHash: h}
	}
	if st == nil {
		return secondFactor{}
	}
	secret, err := fa.au.openTOTP(coll, uid, st.sealed)
	if err != nil {
		fa.au.core.Logger().Warn("totp secret", "err", err)
		return secondFactor{}
	}
	if step, ok := totp.Match(code, secret, fa.au.core.Now()); ok {
		return secondFactor{Step: step}
	}
	return secondFactor{}
}

// useFactorTx spends f for the account inside the transaction: a TOTP step
// above the last one used (which it records), or an unused recovery code
// (which it marks used). It reports whether f was accepted.
func useFactorTx(tx *fsm.Tx, coll, uid string, f secondFactor, now int64) (bool, error) {
	var enabled, last int64
	err := tx.QueryRow(`SELECT enabled, last_step FROM _svc_totp WHERE coll = ? AND user_id = ?`, coll, uid).Scan(&enabled, &last)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && enabled == 0) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	switch {
	case f.Step > 0:
		if f.Step <= last {
			return false, nil
		}
		_, err := tx.Exec(`UPDATE _svc_totp SET last_step = ?, updated = max(updated, ?) WHERE coll = ? AND user_id = ?`,
			f.Step, now, coll, uid)
		return err == nil, err
	case f.RecoveryHash != "":
		res, err := tx.Exec(`UPDATE _svc_recovery_codes SET used_at = ? WHERE coll = ? AND user_id = ? AND hash = ? AND used_at = 0`,
			max(now, 1), coll, uid, f.RecoveryHash)
		if err != nil {
			return false, err
		}
		n, err := res.RowsAffected()
		return n == 1, err
	}
	return false, nil
}

type totpDisableCmd struct {
	Coll   string       `json:"coll"`
	UserID string       `json:"user_id"`
	Factor secondFactor `json:"factor"`
	// Admin clears TOTP without a factor (admin disable-mfa).
	Admin bool  `json:"admin,omitempty"`
	Now   int64 `json:"now"`
}

// DisableTOTP turns the caller's TOTP off with a current code or a
// recovery code (code may hold either; recovery only a recovery code).
func (fa *Factors) DisableTOTP(ctx context.Context, p engine.Principal, name, code, recovery string) (uint64, error) {
	ci, row, err := fa.totpCaller(ctx, p, name)
	if err != nil {
		return 0, err
	}
	code, recovery = strings.TrimSpace(code), strings.TrimSpace(recovery)
	if code == "" && recovery == "" {
		return 0, engine.ValidationError(map[string]string{"code": "cannot be blank"})
	}
	if recovery == "" && len(strings.ReplaceAll(code, " ", "")) != totp.Digits {
		code, recovery = "", code // not a TOTP code: try it as a recovery code
	}
	uid := engine.AsString(row[0])
	st, err := fa.totpState(ctx, ci.ID, uid)
	if err != nil {
		return 0, err
	}
	if st == nil || !st.enabled {
		return 0, errTOTPOff
	}
	f := fa.checkFactor(ci.ID, uid, st, code, recovery)
	if f == (secondFactor{}) {
		return 0, errBadCode
	}
	_, idx, err := fa.au.core.Propose(ctx, cmdTOTPDisable, totpDisableCmd{Coll: ci.ID, UserID: uid, Factor: f, Now: fa.au.core.Now().Unix()})
	return idx, err
}

// AdminDisableMFA clears a user's TOTP (secret and recovery codes), for an
// admin; it succeeds when TOTP was off already. 404 for an unknown user.
func (fa *Factors) AdminDisableMFA(ctx context.Context, name, id string) (uint64, error) {
	ci, err := fa.au.authCollection(name)
	if err != nil {
		return 0, err
	}
	row, err := fa.au.userByID(ctx, ci, id)
	if err != nil {
		return 0, err
	}
	if row == nil {
		return 0, errUserNotFound
	}
	_, idx, err := fa.au.core.Propose(ctx, cmdTOTPDisable, totpDisableCmd{Coll: ci.ID, UserID: id, Admin: true, Now: fa.au.core.Now().Unix()})
	return idx, err
}

var errUserNotFound = &engine.Error{Kind: engine.KindNotFound, Message: "User not found"}

func (fa *Factors) applyTOTPDisable(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[totpDisableCmd](cmd)
	if err != nil {
		return nil, err
	}
	if !c.Admin {
		if on, err := totpOnTx(tx, c.Coll, c.UserID); err != nil || !on {
			return nil, engine.FirstErr(err, errTOTPOff)
		}
		if ok, err := useFactorTx(tx, c.Coll, c.UserID, c.Factor, c.Now); err != nil || !ok {
			return nil, engine.FirstErr(err, errBadCode)
		}
	}
	for _, q := range []string{`DELETE FROM _svc_totp WHERE coll = ? AND user_id = ?`,
		`DELETE FROM _svc_recovery_codes WHERE coll = ? AND user_id = ?`} {
		if _, err := tx.Exec(q, c.Coll, c.UserID); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

type recoveryRegenerateCmd struct {
	Coll   string   `json:"coll"`
	UserID string   `json:"user_id"`
	Hashes []string `json:"hashes"`
}

// RegenerateRecoveryCodes replaces the caller's recovery codes with ten
// new ones, returned this once. TOTP must be on.
func (fa *Factors) RegenerateRecoveryCodes(ctx context.Context, p engine.Principal, name string) ([]string, uint64, error) {
	ci, row, err := fa.totpCaller(ctx, p, name)
	if err != nil {
		return nil, 0, err
	}
	uid := engine.AsString(row[0])
	if on, err := fa.totpEnabled(ctx, ci.ID, uid); err != nil || !on {
		return nil, 0, engine.FirstErr(err, errTOTPOff)
	}
	codes, hashes, err := fa.newRecoveryCodes()
	if err != nil {
		return nil, 0, err
	}
	_, idx, err := fa.au.core.Propose(ctx, cmdRecoveryRegenerate, recoveryRegenerateCmd{Coll: ci.ID, UserID: uid, Hashes: hashes})
	if err != nil {
		return nil, idx, err
	}
	return codes, idx, nil
}

func (fa *Factors) applyRecoveryRegenerate(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[recoveryRegenerateCmd](cmd)
	if err != nil {
		return nil, err
	}
	if on, err := totpOnTx(tx, c.Coll, c.UserID); err != nil || !on {
		return nil, engine.FirstErr(err, errTOTPOff)
	}
	return nil, replaceRecoveryCodes(tx, c.Coll, c.UserID, c.Hashes)
}

// RecoveryCodesStatus counts the caller's recovery codes (both 0 when TOTP
// is off).
func (fa *Factors) RecoveryCodesStatus(ctx context.Context, p engine.Principal, name string) (*RecoveryStatus, error) {
	ci, row, err := fa.totpCaller(ctx, p, name)
	if err != nil {
		return nil, err
	}
	var st RecoveryStatus
	err = fa.au.core.Store().View(ctx, func(r *fsm.Reader) error {
		return r.QueryRow(`SELECT count(*), coalesce(sum(used_at = 0), 0) FROM _svc_recovery_codes
			WHERE coll = ? AND user_id = ? AND EXISTS (SELECT 1 FROM _svc_totp t WHERE t.coll = ? AND t.user_id = ? AND t.enabled = 1)`,
			ci.ID, engine.AsString(row[0]), ci.ID, engine.AsString(row[0])).Scan(&st.Total, &st.Remaining)
	})
	return &st, err
}
