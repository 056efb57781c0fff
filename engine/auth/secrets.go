package auth

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"svcd/engine"
	"svcd/engine/schema"
	"svcd/fsm"
)

// The auth flows (password reset, email verification, email OTP, TOTP,
// MFA tickets, anonymous accounts, impersonation) share the helpers of
// this file: purpose keys derived from the signing key, random secrets,
// keyed hashes, the sealing of TOTP secrets, and the checks on who may
// call.
//
// Everything random or keyed is computed by the node that proposes, and
// the command carries the result (a hash, a sealed secret, a time step);
// the handlers that apply the commands only compare and count.

// Audiences of the single-purpose tokens the flows sign. Authenticate
// accepts only user and admin tokens, so none of these opens a session.
const (
	audReset  = "reset"
	audVerify = "verify"
	audEmail  = "email_change"
	audMFA    = "mfa"
)

// Purposes of the keys derived from the signing key.
const (
	keyRecovery = "recovery codes v1"
	keyOTP      = "email otp v1"
	keyTOTP     = "totp secrets v1"
)

// randomToken returns n random bytes, base64url without padding.
func randomToken(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("engine: random: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// randomCode returns a uniform 6-digit decimal code.
func randomCode() (string, error) {
	var b [8]byte
	for {
		if _, err := rand.Read(b[:]); err != nil {
			return "", fmt.Errorf("engine: random: %w", err)
		}
		// Reject the top of the range to keep the distribution uniform.
		v := binary.BigEndian.Uint64(b[:])
		const limit = (1<<64 - 1) / 1000000 * 1000000
		if v < limit {
			return fmt.Sprintf("%06d", v%1000000), nil
		}
	}
}

// macHex is hex HMAC-SHA-256 under the key for purpose of the parts,
// separated by NUL bytes.
func (au *Auth) macHex(purpose string, parts ...string) string {
	m := hmac.New(sha256.New, au.signer.DeriveKey(purpose))
	for i, p := range parts {
		if i > 0 {
			m.Write([]byte{0})
		}
		m.Write([]byte(p))
	}
	return hex.EncodeToString(m.Sum(nil))
}

// sealTOTP encrypts a TOTP secret (AES-256-GCM under a key derived from
// the signing key, random nonce) bound to its account, so a sealed value
// copied to another account's row does not open.
func (au *Auth) sealTOTP(coll, userID, secret string) (string, error) {
	aead, err := au.totpAEAD()
	if err != nil {
		return "", err
	}
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("engine: random: %w", err)
	}
	ct := aead.Seal(nonce, nonce, []byte(secret), []byte(coll+"\x00"+userID))
	return "v1." + base64.RawURLEncoding.EncodeToString(ct), nil
}

// openTOTP decrypts what sealTOTP made.
func (au *Auth) openTOTP(coll, userID, sealed string) (string, error) {
	raw, ok := strings.CutPrefix(sealed, "v1.")
	if !ok {
		return "", errors.New("engine: unknown TOTP secret format")
	}
	b, err := base64.RawURLEncoding.DecodeString(raw)
	if err != nil {
		return "", fmt.Errorf("engine: TOTP secret: %w", err)
	}
	aead, err := au.totpAEAD()
	if err != nil {
		return "", err
	}
	if len(b) < aead.NonceSize() {
		return "", errors.New("engine: TOTP secret too short")
	}
	pt, err := aead.Open(nil, b[:aead.NonceSize()], b[aead.NonceSize():], []byte(coll+"\x00"+userID))
	if err != nil {
		return "", fmt.Errorf("engine: TOTP secret does not open (was the signing key changed?): %w", err)
	}
	return string(pt), nil
}

func (au *Auth) totpAEAD() (cipher.AEAD, error) {
	block, err := aes.NewCipher(au.signer.DeriveKey(keyTOTP))
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

var (
	errOwnAccountOnly = &engine.Error{Kind: engine.KindForbidden, Message: "Only the account's own user token can do this"}
	errBadFlowToken   = &engine.Error{Kind: engine.KindBadRequest, Message: "Invalid or expired token"}
	errAnonymousOnly  = &engine.Error{Kind: engine.KindValidation, Message: "The account is not anonymous"}
	errNoAnonymous    = &engine.Error{Kind: engine.KindValidation, Message: "Anonymous accounts cannot do this; promote the account first"}
)

// ownUser returns the record of the user p in auth collection ci: p must
// be signed in with a user token of that collection (401 without a token,
// 403 for an admin or a user of another collection).
func (au *Auth) ownUser(ctx context.Context, p engine.Principal, ci *engine.Coll) ([]any, error) {
	switch {
	case p.Kind == engine.Anonymous || p.Claims == nil:
		return nil, errAuthRequired
	case p.Kind != engine.User:
		return nil, errOwnAccountOnly
	}
	if c := au.core.Coll(p.Collection); c == nil || c.ID != ci.ID {
		return nil, errOwnAccountOnly
	}
	row, err := au.userByID(ctx, ci, p.ID)
	if err != nil {
		return nil, err
	}
	if row == nil {
		return nil, errBadToken
	}
	return row, nil
}

// authCollForApply is the auth collection with id coll as the transaction
// sees it now (the command does not pin a schema version: these flows
// touch only system fields, which every version has).
func (au *Auth) authCollForApply(tx *fsm.Tx, coll string) (*engine.Coll, error) {
	var ver int64
	var typ string
	err := tx.QueryRow(`SELECT version, type FROM _svc_collections WHERE id = ?`, coll).Scan(&ver, &typ)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && typ != schema.TypeAuth) {
		return nil, errNotAuthCollection
	}
	if err != nil {
		return nil, err
	}
	return au.core.CollForApply(tx, coll, ver)
}

// userRowTx reads user id of ci inside the transaction; nil if none.
func userRowTx(tx *fsm.Tx, ci *engine.Coll, id string) ([]any, error) {
	row, err := ci.ScanRow(tx.QueryRow("SELECT "+ci.SelectCols()+" FROM "+ci.Table()+" WHERE id = ?", id).Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return row, err
}

// setUserColumns updates system columns of user id (sets: "col = ?"
// fragments with their args), bumps updated past its last value, and
// emits the record update. It returns the new row (nil if no such user).
func (au *Auth) setUserColumns(tx *fsm.Tx, ci *engine.Coll, id string, now int64, sets []string, args []any) ([]any, error) {
	q := "UPDATE " + ci.Table() + " SET " + strings.Join(sets, ", ") + ", updated = max(?, updated + 1) WHERE id = ? RETURNING " + ci.SelectCols()
	row, err := ci.ScanRow(tx.QueryRow(q, append(args, now, id)...).Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	// Account flows change system columns: the actor is the system.
	if err := au.core.RecordWritten(tx, engine.EvRecordUpdate, ci, row, now, nil); err != nil {
		return nil, err
	}
	return row, nil
}

// revokeTx adds jti to the revocation list inside the transaction.
func revokeTx(tx *fsm.Tx, jti string, exp int64) error {
	if jti == "" {
		return nil
	}
	if _, err := tx.Exec(`INSERT INTO _svc_revoked (jti, exp) VALUES (?, ?)
		ON CONFLICT (jti) DO UPDATE SET exp = max(exp, excluded.exp)`, jti, exp); err != nil {
		return err
	}
	tx.Emit(fsm.Event{Kind: evRevoked, Subject: jti})
	return nil
}

// isRevokedTx reports whether jti is on the revocation list.
func isRevokedTx(tx *fsm.Tx, jti string) (bool, error) {
	var n int
	err := tx.QueryRow(`SELECT count(*) FROM _svc_revoked WHERE jti = ?`, jti).Scan(&n)
	return n > 0, err
}

// outcome builds the result row of a flow command that must commit even
// when the attempt fails (a counted wrong code): the handler returns no
// error, and the proposer turns the outcome into the answer.
func outcome(status string) *flowOutcome { return &flowOutcome{Status: status} }

// flowOutcome is a flow command's answer: its status ("ok", "wrong",
// "spent", "invalid", "burned") and, for an email OTP sign-in, the account
// and whether it has a second factor on.
type flowOutcome struct {
	Status string `json:"status"`
	UserID string `json:"user_id,omitempty"`
	MFA    bool   `json:"mfa,omitempty"`
}

// outcomeOf reads a flow command's result. A leader of the previous
// version answered with a row (status, then the user id and 0/1 for the
// second factor); it is read too during a rolling upgrade.
func outcomeOf(res any) *flowOutcome {
	switch r := res.(type) {
	case *flowOutcome:
		return r
	case engine.Row:
		out := &flowOutcome{}
		if len(r) > 0 {
			out.Status, _ = r[0].(string)
		}
		if len(r) > 2 {
			out.UserID, _ = r[1].(string)
			out.MFA = engine.AsInt64(r[2]) != 0
		}
		return out
	}
	return &flowOutcome{}
}

// blankDetails collects "cannot be blank" for each empty named value.
func blankDetails(kv ...string) map[string]string {
	d := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		if strings.TrimSpace(kv[i+1]) == "" {
			d[kv[i]] = "cannot be blank"
		}
	}
	return d
}

// normalizeEmail validates an address given to a flow; the message is for
// the email field's details.
func normalizeEmail(email string) (string, string) {
	stored, msg := schema.NormalizeValue(emailField, strings.TrimSpace(email))
	s, _ := stored.(string)
	return s, msg
}
