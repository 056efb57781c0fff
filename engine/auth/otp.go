package auth

import (
	"context"
	"crypto/subtle"
	"database/sql"
	"errors"
	"strings"
	"time"

	"svcd/engine"
	"svcd/engine/mail"
	"svcd/fsm"
)

// Email OTP (SPEC.md, Authentication 8). One request issues one token: a
// long link token and a 6-digit code, valid 10 minutes. The table keeps
// only keyed hashes of both (the code's hash is bound to the account). A
// new request replaces the account's earlier token. The code path counts
// wrong codes in the replicated table: the fifth wrong code burns the
// token, so the count is the cluster's, not a node's. Success consumes
// the token and sets email_verified.

const (
	otpTTL         = 10 * time.Minute
	otpMaxAttempts = 5
)

// RequestOTP mails a code and a sign-in link to email if it is a
// non-anonymous account of collection name. The answer does not depend on
// the account (see RequestPasswordReset).
func (au *Auth) RequestOTP(ctx context.Context, name, email string) error {
	ci, addr, sender, err := au.mailRequest(name, email, flowOTP)
	if err != nil || sender == nil {
		return err
	}
	au.later(flowOTP.what, func(ctx context.Context) error {
		otp, _, err := au.IssueOTP(ctx, ci.Name, addr)
		if err != nil || otp == nil {
			return err
		}
		c, err := mail.OTPEmail(au.mailInput(ci, otp.Token, otp.Code, otpTTL))
		if err != nil {
			return err
		}
		return send(ctx, sender, c, otp.Email)
	})
	return nil
}

// IssuedOTP is a token just stored: the secrets that go into the email.
type IssuedOTP struct {
	Email string
	Token string
	Code  string
}

type otpIssueCmd struct {
	ID        string `json:"id"`
	Coll      string `json:"coll"`
	UserID    string `json:"user_id"`
	TokenHash string `json:"token_hash"`
	CodeMAC   string `json:"code_mac"`
	Now       int64  `json:"now"`
	Expires   int64  `json:"expires"`
}

// IssueOTP stores a new OTP token for the account email of collection name
// and returns its secrets, or nil when there is no such account or it is
// anonymous. RequestOTP mails them; nothing else should call it outside
// tests.
func (au *Auth) IssueOTP(ctx context.Context, name, email string) (*IssuedOTP, uint64, error) {
	ci, err := au.authCollection(name)
	if err != nil {
		return nil, 0, err
	}
	row, err := au.userByEmail(ctx, ci, email)
	if err != nil || row == nil || asBool(row[ci.RowIndex("is_anonymous")]) {
		return nil, 0, err
	}
	tok, err := randomToken(32)
	if err != nil {
		return nil, 0, err
	}
	code, err := randomCode()
	if err != nil {
		return nil, 0, err
	}
	uid := engine.AsString(row[0])
	now := au.core.Now()
	_, idx, err := au.core.Propose(ctx, cmdOTPIssue, otpIssueCmd{
		ID: engine.NewID(), Coll: ci.ID, UserID: uid,
		TokenHash: au.otpTokenHash(tok), CodeMAC: au.otpCodeMAC(ci.ID, uid, code),
		Now: now.Unix(), Expires: now.Add(otpTTL).Unix(),
	})
	if err != nil {
		return nil, idx, err
	}
	stored, _ := row[ci.RowIndex("email")].(string)
	return &IssuedOTP{Email: stored, Token: tok, Code: code}, idx, nil
}

func (au *Auth) otpTokenHash(tok string) string { return au.macHex(keyOTP, "token", tok) }

func (au *Auth) otpCodeMAC(coll, userID, code string) string {
	return au.macHex(keyOTP, "code", coll, userID, code)
}

func (au *Auth) applyOTPIssue(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[otpIssueCmd](cmd)
	if err != nil {
		return nil, err
	}
	if _, err := tx.Exec(`DELETE FROM _svc_otps WHERE expires_at <= ? OR (coll = ? AND user_id = ?)`, c.Now, c.Coll, c.UserID); err != nil {
		return nil, err
	}
	_, err = tx.Exec(`INSERT INTO _svc_otps (id, coll, user_id, token_hash, code_mac, attempts, expires_at, created)
		VALUES (?, ?, ?, ?, ?, 0, ?, ?)`, c.ID, c.Coll, c.UserID, c.TokenHash, c.CodeMAC, c.Expires, c.Now)
	return nil, err
}

// OTPAuth is the body of POST /auth/:collection/otp/auth: the link token
// alone, or the code with the account's email.
type OTPAuth struct {
	Token string `json:"token"`
	Code  string `json:"code"`
	Email string `json:"email"`
}

type otpAuthCmd struct {
	Coll      string `json:"coll"`
	TokenHash string `json:"token_hash,omitempty"`
	UserID    string `json:"user_id,omitempty"`
	CodeMAC   string `json:"code_mac,omitempty"`
	Now       int64  `json:"now"`
	// AccountCap applies the account's code budget to codes (commands
	// proposed before it existed replay without it).
	AccountCap bool `json:"account_cap,omitempty"`
	// Unknown keys the budget of an email no account has, so that a
	// stranger's email runs out of tries like an account's and the
	// answers never tell them apart.
	Unknown string `json:"unknown,omitempty"`
}

// AuthWithOTP signs in with an OTP token or code: a session, or an MFA
// ticket when the account has TOTP on. Every wrong or unknown token or
// code is the same 401, whether or not the account exists.
func (au *Auth) AuthWithOTP(ctx context.Context, name string, in OTPAuth) (*UserSession, uint64, error) {
	ci, err := au.authCollection(name)
	if err != nil {
		return nil, 0, err
	}
	if !au.authFeature(ci, "otp") {
		return nil, 0, errFeatureOff("Email OTP")
	}
	cmd := otpAuthCmd{Coll: ci.ID, Now: au.core.Now().Unix(), AccountCap: true}
	switch code := strings.TrimSpace(in.Code); {
	case in.Token != "":
		cmd.TokenHash = au.otpTokenHash(in.Token)
	case code != "" && strings.TrimSpace(in.Email) != "":
		if len(code) != 6 || strings.Trim(code, "0123456789") != "" {
			return nil, 0, engine.FieldError("code", "must be 6 digits")
		}
		// An unknown email still goes through the log (and fails there),
		// so it costs what a wrong code costs.
		row, err := au.userByEmail(ctx, ci, strings.TrimSpace(in.Email))
		if err != nil {
			return nil, 0, err
		}
		if row != nil {
			cmd.UserID = engine.AsString(row[0])
		} else {
			cmd.Unknown = "?" + au.macHex(keyOTP, "unknown", strings.ToLower(strings.TrimSpace(in.Email)))
		}
		cmd.CodeMAC = au.otpCodeMAC(ci.ID, cmd.UserID, code)
	default:
		return nil, 0, engine.ValidationError(map[string]string{"token": "send the token, or the code and the email"})
	}
	res, idx, err := au.core.Propose(ctx, cmdOTPAuth, cmd)
	if err != nil {
		return nil, idx, err
	}
	out := outcomeOf(res)
	if out.Status != "ok" || out.UserID == "" {
		return nil, idx, ErrInvalidCreds
	}
	uid, mfa := out.UserID, out.MFA
	// The session carries the record as it is after the command
	// (email_verified set): wait for this replica to apply it.
	if err := au.core.Store().WaitApplied(ctx, idx); err != nil {
		return nil, idx, err
	}
	row, err := au.userByID(ctx, ci, uid)
	if err != nil || row == nil {
		return nil, idx, engine.FirstErr(err, ErrInvalidCreds)
	}
	if mfa && au.authFeature(ci, "mfa") {
		s, err := au.fac.issueMFATicket(ci, uid)
		return s, idx, err
	}
	s, err := au.issueUserSession(ci, row, 0, "")
	return s, idx, err
}

func (au *Auth) applyOTPAuth(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[otpAuthCmd](cmd)
	if err != nil {
		return nil, err
	}
	if _, err := tx.Exec(`DELETE FROM _svc_otps WHERE expires_at <= ?`, c.Now); err != nil {
		return nil, err
	}
	// A code spends the budget of its account, or of its email when no
	// account has it: budget is that key ("" for a link token, and for
	// commands from before the budget).
	budget := ""
	if c.TokenHash == "" && c.AccountCap {
		budget = c.UserID
		if budget == "" {
			budget = c.Unknown
		}
		if err := codeBudgetOpen(tx, c.Coll, budget, c.Now); err != nil {
			return nil, err
		}
	}
	wrong := func() error {
		if budget == "" {
			return nil
		}
		return codeFailed(tx, c.Coll, budget, c.Now)
	}
	var id, uid, mac string
	var attempts int64
	switch {
	case c.TokenHash != "":
		err = tx.QueryRow(`SELECT id, user_id, code_mac, attempts FROM _svc_otps WHERE token_hash = ? AND coll = ?`,
			c.TokenHash, c.Coll).Scan(&id, &uid, &mac, &attempts)
	case c.UserID != "":
		err = tx.QueryRow(`SELECT id, user_id, code_mac, attempts FROM _svc_otps WHERE coll = ? AND user_id = ?`,
			c.Coll, c.UserID).Scan(&id, &uid, &mac, &attempts)
	default:
		return outcome("invalid"), wrong()
	}
	if errors.Is(err, sql.ErrNoRows) {
		return outcome("invalid"), wrong()
	}
	if err != nil {
		return nil, err
	}
	if c.TokenHash == "" && subtle.ConstantTimeCompare([]byte(mac), []byte(c.CodeMAC)) != 1 {
		if err := wrong(); err != nil {
			return nil, err
		}
		attempts++
		if attempts >= otpMaxAttempts {
			_, err := tx.Exec(`DELETE FROM _svc_otps WHERE id = ?`, id)
			return outcome("burned"), err
		}
		_, err := tx.Exec(`UPDATE _svc_otps SET attempts = ? WHERE id = ?`, attempts, id)
		return outcome("invalid"), err
	}
	if _, err := tx.Exec(`DELETE FROM _svc_otps WHERE id = ?`, id); err != nil {
		return nil, err
	}
	ci, err := au.authCollForApply(tx, c.Coll)
	if err != nil {
		return outcome("invalid"), nil
	}
	row, err := userRowTx(tx, ci, uid)
	if err != nil {
		return nil, err
	}
	if row == nil {
		return outcome("invalid"), nil
	}
	if !asBool(row[ci.RowIndex("email_verified")]) {
		if _, err := au.setUserColumns(tx, ci, uid, c.Now, []string{"email_verified = 1"}, nil); err != nil {
			return nil, err
		}
	}
	on, err := totpOnTx(tx, c.Coll, uid)
	if err != nil {
		return nil, err
	}
	return &flowOutcome{Status: "ok", UserID: uid, MFA: on}, nil
}
