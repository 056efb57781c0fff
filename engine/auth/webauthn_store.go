package auth

import (
	"context"
	"database/sql"
	"encoding/base64"
	"errors"

	"svcd/engine"
	"svcd/engine/schema"
	"svcd/fsm"
)

// Passkey is one registered passkey as its owner sees it. LastUsed is nil
// until the first sign-in with it.
type Passkey struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	CredentialID string `json:"credential_id"`
	Created      int64  `json:"created"`
	LastUsed     *int64 `json:"last_used"`
	// BackedUp is the authenticator's backup state: true for a synced
	// passkey (a password manager's, a platform's cloud keychain).
	BackedUp bool `json:"backed_up"`
}

// registerMigration adds the passkey tables (internal schema version 8).
func (pk *Passkeys) registerMigration() {
	pk.au.core.Migration(engine.Migration{Version: passkeysVersion, Owner: "auth", Stmts: []string{
		// Registered passkeys: the credential id (base64url, unique
		// across collections), the protocol's credential record
		// (go-webauthn's, as JSON: public key, flags, transports, AAGUID,
		// attestation), and what
		// sign-ins change: the sign counter, the backup state, the time
		// of the last use (0: never).
		`CREATE TABLE _svc_webauthn_credentials (id TEXT PRIMARY KEY, coll TEXT NOT NULL, user_id TEXT NOT NULL,
			credential_id TEXT NOT NULL UNIQUE, name TEXT NOT NULL, data TEXT NOT NULL, sign_count INTEGER NOT NULL,
			backed_up INTEGER NOT NULL, created INTEGER NOT NULL, last_used INTEGER NOT NULL)`,
		`CREATE INDEX _svc_webauthn_credentials_user ON _svc_webauthn_credentials (coll, user_id)`,
		// Ceremonies begun and not yet finished: the keyed hash of the
		// ticket, register or login, the account ("" for a sign-in that
		// names none), the protocol's session (go-webauthn's session
		// data as JSON: challenge, allowed credentials), expiry.
		`CREATE TABLE _svc_webauthn_tickets (hash TEXT PRIMARY KEY, kind TEXT NOT NULL, coll TEXT NOT NULL,
			user_id TEXT NOT NULL, session TEXT NOT NULL, expires_at INTEGER NOT NULL) WITHOUT ROWID`,
	}})
}

// passkeyUserOf reads the passkeys of account row of ci from the replica.
func (pk *Passkeys) passkeyUserOf(ctx context.Context, ci *engine.Coll, row []any) (*PasskeyUser, error) {
	u := &PasskeyUser{ID: engine.AsString(row[0])}
	u.Name, _ = row[ci.RowIndex("email")].(string)
	err := pk.au.core.Store().View(ctx, func(r *fsm.Reader) error {
		rows, err := r.Query(`SELECT data, sign_count, backed_up FROM _svc_webauthn_credentials
			WHERE coll = ? AND user_id = ? ORDER BY created, rowid`, ci.ID, u.ID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var data string
			var count, backed int64
			if err := rows.Scan(&data, &count, &backed); err != nil {
				return err
			}
			u.Credentials = append(u.Credentials, StoredPasskey{Record: []byte(data), SignCount: uint32(count), BackedUp: backed != 0})
		}
		return rows.Err()
	})
	return u, err
}

// credentialOwner is the account (in ci) of the passkey with credential
// id raw, "" when no account of ci has it.
func (pk *Passkeys) credentialOwner(ctx context.Context, ci *engine.Coll, raw []byte) (string, error) {
	var uid string
	err := pk.au.core.Store().View(ctx, func(r *fsm.Reader) error {
		return r.QueryRow(`SELECT user_id FROM _svc_webauthn_credentials WHERE credential_id = ? AND coll = ?`,
			base64.RawURLEncoding.EncodeToString(raw), ci.ID).Scan(&uid)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return uid, err
}

const passkeyCols = `id, name, credential_id, created, last_used, backed_up`

func scanPasskey(scan func(...any) error) (Passkey, error) {
	var p Passkey
	var last, backed int64
	if err := scan(&p.ID, &p.Name, &p.CredentialID, &p.Created, &last, &backed); err != nil {
		return p, err
	}
	if last > 0 {
		p.LastUsed = &last
	}
	p.BackedUp = backed != 0
	return p, nil
}

// passkeysOf lists the passkeys of account uid of ci, oldest first (by
// second, then by insertion: the apply inserts in log order).
func (pk *Passkeys) passkeysOf(ctx context.Context, coll, uid string) ([]Passkey, error) {
	out := []Passkey{}
	err := pk.au.core.Store().View(ctx, func(r *fsm.Reader) error {
		rows, err := r.Query(`SELECT `+passkeyCols+` FROM _svc_webauthn_credentials WHERE coll = ? AND user_id = ?
			ORDER BY created, rowid`, coll, uid)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			p, err := scanPasskey(rows.Scan)
			if err != nil {
				return err
			}
			out = append(out, p)
		}
		return rows.Err()
	})
	return out, err
}

// passkeyByID reads one passkey of account uid; nil when it has none with
// that id.
func (pk *Passkeys) passkeyByID(ctx context.Context, coll, uid, id string) (*Passkey, error) {
	var p Passkey
	err := pk.au.core.Store().View(ctx, func(r *fsm.Reader) error {
		var err error
		p, err = scanPasskey(r.QueryRow(`SELECT `+passkeyCols+` FROM _svc_webauthn_credentials
			WHERE id = ? AND coll = ? AND user_id = ?`, id, coll, uid).Scan)
		return err
	})
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &p, nil
}

// dropPasskeys deletes the passkeys and open ceremonies of user id of
// auth collection collID (of every user of it when id is ""), in the
// apply transaction of the delete that removes them. A delete replayed
// from before the tables existed has nothing to do.
func dropPasskeys(tx *fsm.Tx, collID, id string) error {
	if v, err := engine.InternalVersionTx(tx); err != nil || v < passkeysVersion {
		return err
	}
	for _, t := range [...]string{"_svc_webauthn_credentials", "_svc_webauthn_tickets"} {
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

// registerCleanup removes an account's passkeys with the account, and a
// collection's with the collection.
func (pk *Passkeys) registerCleanup() {
	pk.au.core.OnRecordWrite(engine.RecordHook{Name: "passkeys", Apply: func(tx *fsm.Tx, w *engine.RecordWrite) error {
		if w.Coll.Type != schema.TypeAuth || w.Kind != engine.EvRecordDelete {
			return nil
		}
		return dropPasskeys(tx, w.Coll.ID, engine.AsString(w.Row[0]))
	}})
	pk.au.core.OnCollectionChange(engine.CollectionHook{Name: "passkeys", Apply: func(tx *fsm.Tx, c engine.CollectionChange) error {
		if c.New != nil || c.Old.Type != schema.TypeAuth {
			return nil
		}
		return dropPasskeys(tx, c.Old.ID, "")
	}})
}
