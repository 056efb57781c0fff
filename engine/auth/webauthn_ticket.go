package auth

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"svcd/engine"
	"svcd/fsm"
)

// passkeyTicketTTL is how long a ceremony may take, from its options step
// to its verify step (also the timeout the options give the browser).
const passkeyTicketTTL = 5 * time.Minute

// Ceremony kinds.
const (
	ceremonyRegister = "register"
	ceremonyLogin    = "login"
)

// PasskeyCeremony is the answer of an options step: the options to give
// navigator.credentials.create (register) or .get (sign-in), as
// {"publicKey": {...}} in the WebAuthn JSON form, and the ticket to send
// back with the authenticator's answer.
type PasskeyCeremony struct {
	Options json.RawMessage `json:"options"`
	Ticket  string          `json:"ticket"`
}

// PasskeyFinish is the body of a verify step: the ticket of the options
// step, the authenticator's answer (the PublicKeyCredential as JSON, as
// its toJSON() gives it) and, for a registration, a name for the passkey.
type PasskeyFinish struct {
	Ticket   string          `json:"ticket"`
	Response json.RawMessage `json:"response"`
	Name     string          `json:"name"`
}

type passkeyCeremonyCmd struct {
	Hash    string `json:"hash"`
	Kind    string `json:"kind"`
	Coll    string `json:"coll"`
	UserID  string `json:"user_id"`
	Session string `json:"session"`
	Now     int64  `json:"now"`
	Expires int64  `json:"expires"`
}

// ticketHash is the stored form of a ticket.
func (pk *Passkeys) ticketHash(tok string) string { return pk.au.macHex(keyPasskeyTicket, tok) }

// openCeremony stores the session of opts as a new ticket of kind for
// account uid ("" for a sign-in that names no account) of collection
// coll, and answers the options with the ticket.
func (pk *Passkeys) openCeremony(ctx context.Context, kind, coll, uid string, opts *PasskeyOptions) (*PasskeyCeremony, uint64, error) {
	tok, err := randomToken(32)
	if err != nil {
		return nil, 0, err
	}
	now := pk.au.core.Now()
	_, idx, err := pk.au.core.Propose(ctx, cmdPasskeyCeremony, passkeyCeremonyCmd{
		Hash: pk.ticketHash(tok), Kind: kind, Coll: coll, UserID: uid, Session: string(opts.Session),
		Now: now.Unix(), Expires: now.Add(passkeyTicketTTL).Unix(),
	})
	if err != nil {
		return nil, idx, err
	}
	return &PasskeyCeremony{Options: opts.Options, Ticket: tok}, idx, nil
}

func (pk *Passkeys) applyCeremony(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[passkeyCeremonyCmd](cmd)
	if err != nil {
		return nil, err
	}
	if _, err := tx.Exec(`DELETE FROM _svc_webauthn_tickets WHERE expires_at < ?`, c.Now); err != nil {
		return nil, err
	}
	_, err = tx.Exec(`INSERT INTO _svc_webauthn_tickets (hash, kind, coll, user_id, session, expires_at)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (hash) DO NOTHING`, c.Hash, c.Kind, c.Coll, c.UserID, c.Session, c.Expires)
	return nil, err
}

// ceremony is a stored ticket as a verify step reads it.
type ceremony struct {
	hash    string
	userID  string
	session []byte
}

// readCeremony reads ticket tok of kind for collection coll from this
// replica: nil when there is none or it has expired by this node's clock.
// (The command that consumes it decides again.)
func (pk *Passkeys) readCeremony(ctx context.Context, kind, coll, tok string) (*ceremony, error) {
	if tok == "" {
		return nil, nil
	}
	c := &ceremony{hash: pk.ticketHash(tok)}
	var session string
	var exp int64
	err := pk.au.core.Store().View(ctx, func(r *fsm.Reader) error {
		return r.QueryRow(`SELECT user_id, session, expires_at FROM _svc_webauthn_tickets WHERE hash = ? AND kind = ? AND coll = ?`,
			c.hash, kind, coll).Scan(&c.userID, &session, &exp)
	})
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, err
	case pk.au.core.Now().Unix() > exp:
		return nil, nil
	}
	c.session = []byte(session)
	return c, nil
}

// consumeCeremony removes the ticket with hash in the apply transaction.
// It reports false when there is no such ticket of kind and collection
// coll for account uid (or for no account in particular), or it has
// expired at now: then nothing changes.
func consumeCeremony(tx *fsm.Tx, hash, kind, coll, uid string, now int64) (bool, error) {
	var h string
	err := tx.QueryRow(`DELETE FROM _svc_webauthn_tickets WHERE hash = ? AND kind = ? AND coll = ?
		AND (user_id = '' OR user_id = ?) AND expires_at >= ? RETURNING hash`, hash, kind, coll, uid, now).Scan(&h)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}
