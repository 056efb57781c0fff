package auth

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"svcd/engine"
	"svcd/engine/token"
	"svcd/fsm"
)

// MFA tickets. A sign-in (password or email OTP) of an account with TOTP
// on answers {mfa_required, mfa_token} instead of a session. The ticket is
// a signed JWT with audience "mfa" (the account, a jti, 5 minutes), so
// issuing one writes nothing. Its use is replicated state, kept per jti in
// _svc_mfa_tickets and decided when the exchange command is applied: a
// ticket is consumed by the first right code and burned by the fifth
// wrong one, on whichever nodes the attempts land. Rows outlive their
// ticket by a grace period (clocks of nodes differ) and are then removed.
// Wrong codes also count against the account's code budget
// (code_budget.go).
const (
	mfaTicketTTL   = 5 * time.Minute
	mfaMaxAttempts = 5
	// mfaRowGrace keeps a spent ticket's row this long past its expiry, so
	// a node whose clock is behind cannot take the ticket for a fresh one.
	mfaRowGrace = 10 * time.Minute
)

var errBadTicket = &engine.Error{Kind: engine.KindUnauthorized, Message: "Invalid or expired MFA token"}

// issueMFATicket answers a first factor for an account with TOTP on.
func (fa *Factors) issueMFATicket(ci *engine.Coll, uid string) (*UserSession, error) {
	tok, _, err := fa.au.signer.Issue(token.Claims{ID: uid, Collection: ci.ID}, audMFA, fa.au.core.Now(), mfaTicketTTL)
	if err != nil {
		return nil, err
	}
	return &UserSession{MFARequired: true, MFAToken: tok}, nil
}

// mfaGate is the last step of a first factor: an MFA ticket when the
// feature is on and the account has TOTP on (on this replica), else nil.
func (fa *Factors) mfaGate(ctx context.Context, ci *engine.Coll, uid string) (*UserSession, error) {
	if !fa.au.authFeature(ci, "mfa") {
		return nil, nil
	}
	on, err := fa.totpEnabled(ctx, ci.ID, uid)
	if err != nil || !on {
		return nil, err
	}
	return fa.issueMFATicket(ci, uid)
}

type mfaExchangeCmd struct {
	JTI    string       `json:"jti"`
	Coll   string       `json:"coll"`
	UserID string       `json:"user_id"`
	Exp    int64        `json:"exp"`
	Factor secondFactor `json:"factor"`
	Now    int64        `json:"now"`
	// AccountCap applies the account's code budget (commands proposed
	// before it existed replay without it).
	AccountCap bool `json:"account_cap,omitempty"`
}

// LoginMFA exchanges an MFA ticket and a TOTP code (or a recovery code)
// for a session. A wrong code is 401 Invalid credentials and counts
// against the ticket.
func (fa *Factors) LoginMFA(ctx context.Context, name, ticket, code, recovery string) (*UserSession, uint64, error) {
	ci, err := fa.au.authCollection(name)
	if err != nil {
		return nil, 0, err
	}
	if !fa.au.authFeature(ci, "mfa") {
		return nil, 0, errFeatureOff("MFA")
	}
	code, recovery = strings.TrimSpace(code), strings.TrimSpace(recovery)
	d := blankDetails("mfa_token", ticket)
	switch {
	case code == "" && recovery == "":
		d["code"] = "send code or recovery_code"
	case code != "" && recovery != "":
		d["recovery_code"] = "send code or recovery_code, not both"
	}
	if len(d) > 0 {
		return nil, 0, engine.ValidationError(d)
	}
	c, err := fa.au.signer.Verify(ticket, audMFA)
	if err != nil || c.Collection != ci.ID || c.ExpiresAt == nil {
		return nil, 0, errBadTicket
	}
	st, err := fa.totpState(ctx, ci.ID, c.ID)
	if err != nil {
		return nil, 0, err
	}
	res, idx, err := fa.au.core.Propose(ctx, cmdMFAExchange, mfaExchangeCmd{
		JTI: c.RegisteredClaims.ID, Coll: ci.ID, UserID: c.ID, Exp: c.ExpiresAt.Unix(),
		Factor: fa.checkFactor(ci.ID, c.ID, st, code, recovery), Now: fa.au.core.Now().Unix(), AccountCap: true,
	})
	if err != nil {
		return nil, idx, err
	}
	switch outcomeOf(res).Status {
	case "ok":
	case "spent":
		return nil, idx, errBadTicket
	default:
		return nil, idx, ErrInvalidCreds
	}
	row, err := fa.au.userByID(ctx, ci, c.ID)
	if err != nil || row == nil {
		return nil, idx, engine.FirstErr(err, errBadTicket)
	}
	s, err := fa.au.issueUserSession(ci, row, 0, "")
	return s, idx, err
}

func (fa *Factors) applyMFAExchange(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[mfaExchangeCmd](cmd)
	if err != nil {
		return nil, err
	}
	if _, err := tx.Exec(`DELETE FROM _svc_mfa_tickets WHERE expires_at < ?`, c.Now-int64(mfaRowGrace/time.Second)); err != nil {
		return nil, err
	}
	if c.Now > c.Exp {
		return outcome("spent"), nil
	}
	var state string
	var attempts int64
	err = tx.QueryRow(`SELECT state, attempts FROM _svc_mfa_tickets WHERE jti = ?`, c.JTI).Scan(&state, &attempts)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		state = "open"
	case err != nil:
		return nil, err
	}
	if state != "open" {
		return outcome("spent"), nil
	}
	if c.AccountCap {
		if err := codeBudgetOpen(tx, c.Coll, c.UserID, c.Now); err != nil {
			return nil, err
		}
	}
	ok, err := useFactorTx(tx, c.Coll, c.UserID, c.Factor, c.Now)
	if err != nil {
		return nil, err
	}
	res := outcome("ok")
	if ok {
		state = "consumed"
	} else {
		attempts++
		res = outcome("wrong")
		if attempts >= mfaMaxAttempts {
			state = "burned"
		}
		if c.AccountCap {
			if err := codeFailed(tx, c.Coll, c.UserID, c.Now); err != nil {
				return nil, err
			}
		}
	}
	_, err = tx.Exec(`INSERT INTO _svc_mfa_tickets (jti, coll, user_id, state, attempts, expires_at) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (jti) DO UPDATE SET state = excluded.state, attempts = excluded.attempts`,
		c.JTI, c.Coll, c.UserID, state, attempts, c.Exp)
	return res, err
}
