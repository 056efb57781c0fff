package engine

import (
	"context"
	"fmt"

	"svcd/engine/crypt"
	"svcd/engine/schema"
	"svcd/fsm"
)

// Key rotation (`svcd rotate-key`): every secret setting and encrypted
// field value not yet sealed under the current key (sealed under an old
// key, or stored in plain text before a key was set) is re-sealed, all in
// one command. Each change applies only if the stored value is still the
// one that was read, so a concurrent write is never overwritten; running
// it again finishes what a concurrent write or a schema change skipped.

type rotatedSetting struct {
	Key string `json:"key"`
	Old string `json:"old"`
	New string `json:"new"`
}

type rotatedValue struct {
	Coll  string `json:"coll"`
	Ver   int64  `json:"ver"`
	ID    string `json:"id"`
	Field string `json:"field"`
	Old   string `json:"old"`
	New   string `json:"new"`
}

// rotateCmd is the command of both key rotation types: 55 carries
// settings and field values; 56 (written when modules' secrets need
// re-sealing too, so a binary that does not know them never applies a
// rotation only in part) carries Secrets as well.
type rotateCmd struct {
	Settings []rotatedSetting `json:"settings,omitempty"`
	Values   []rotatedValue   `json:"values,omitempty"`
	Secrets  []rotatedSecret  `json:"secrets,omitempty"`
}

// RotateResult counts what a rotation re-sealed, and what it had to leave
// because the value changed meanwhile.
type RotateResult struct {
	Settings int `json:"settings"`
	Values   int `json:"values"`
	// Secrets counts modules' secrets (webhook signing secrets).
	Secrets int `json:"secrets"`
	Skipped int `json:"skipped"`
}

var errNoKeyring = &Error{Kind: KindValidation, Message: "No encryption key: start the node with SVC_ENCRYPTION_KEY"}

// RotateKey re-seals everything under the current key.
func (e *Engine) RotateKey(ctx context.Context) (*RotateResult, uint64, error) {
	if e.keyring == nil {
		return nil, 0, errNoKeyring
	}
	var cmd rotateCmd
	err := e.store.View(ctx, func(r *fsm.Reader) error {
		if err := e.rotateSettings(r, &cmd); err != nil {
			return err
		}
		if err := e.rotateValues(r, &cmd); err != nil {
			return err
		}
		return e.rotateSecrets(r, &cmd)
	})
	if err != nil {
		return nil, 0, err
	}
	if len(cmd.Settings) == 0 && len(cmd.Values) == 0 && len(cmd.Secrets) == 0 {
		return &RotateResult{}, 0, nil
	}
	typ := cmdRotateKey
	if len(cmd.Secrets) > 0 {
		typ = cmdRotateKeySecrets
	}
	res, idx, err := e.Propose(ctx, typ, cmd)
	if err != nil {
		return nil, idx, err
	}
	out, _ := res.(*RotateResult)
	if out == nil {
		out = &RotateResult{}
	}
	return out, idx, nil
}

// current reports whether s is already sealed under the current key.
func (e *Engine) current(s string) bool { return crypt.KeyID(s) == e.keyring.CurrentID() }

// reseal opens s (sealed under any key of the ring, or plain) and seals
// it under the current key.
func (e *Engine) reseal(s string) (string, error) {
	plain, err := e.keyring.Open(s)
	if err != nil {
		return "", err
	}
	return e.keyring.Seal(plain)
}

func (e *Engine) rotateSettings(r *fsm.Reader, cmd *rotateCmd) error {
	rows, err := r.Query(`SELECT key, value FROM _svc_settings ORDER BY key`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return err
		}
		if v == "" || !e.IsSecretSetting(k) || e.current(v) {
			continue
		}
		n, err := e.reseal(v)
		if err != nil {
			return fmt.Errorf("setting %s: %w", k, err)
		}
		cmd.Settings = append(cmd.Settings, rotatedSetting{Key: k, Old: v, New: n})
	}
	return rows.Err()
}

func (e *Engine) rotateValues(r *fsm.Reader, cmd *rotateCmd) error {
	for _, ci := range e.schema.Load().list {
		if ci.Type == schema.TypeView {
			continue
		}
		for _, f := range ci.fields {
			if !f.Encrypted {
				continue
			}
			rows, err := r.Query(`SELECT id, ` + f.col + ` FROM ` + ci.table + ` WHERE ` + f.col + ` IS NOT NULL ORDER BY id`)
			if err != nil {
				return err
			}
			for rows.Next() {
				var id string
				var v any
				if err := rows.Scan(&id, &v); err != nil {
					rows.Close()
					return err
				}
				s, ok := v.(string)
				if !ok || s == "" || e.current(s) {
					continue
				}
				n, err := e.reseal(s)
				if err != nil {
					rows.Close()
					return fmt.Errorf("%s/%s field %s: %w", ci.Name, id, f.Name, err)
				}
				cmd.Values = append(cmd.Values, rotatedValue{Coll: ci.ID, Ver: ci.Version, ID: id, Field: f.Name, Old: s, New: n})
			}
			if err := rows.Close(); err != nil {
				return err
			}
		}
	}
	return nil
}

func (e *Engine) applyRotateKey(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := decodeCmd[rotateCmd](cmd)
	if err != nil {
		return nil, err
	}
	out := &RotateResult{}
	for _, s := range c.Settings {
		res, err := tx.Exec(`UPDATE _svc_settings SET value = ? WHERE key = ? AND value = ?`, s.New, s.Key, s.Old)
		if err != nil {
			return nil, err
		}
		if n, _ := res.RowsAffected(); n == 1 {
			out.Settings++
		} else {
			out.Skipped++
		}
	}
	for _, v := range c.Values {
		ci, err := e.CollForApply(tx, v.Coll, v.Ver)
		var col string
		if err == nil {
			if f := ci.fieldByName(v.Field); f != nil && f.Encrypted {
				col = f.col
			}
		}
		if col == "" {
			out.Skipped++ // the collection or field changed since the read
			continue
		}
		res, err := tx.Exec(`UPDATE `+ci.table+` SET `+col+` = ? WHERE id = ? AND `+col+` = ?`, v.New, v.ID, v.Old)
		if err != nil {
			return nil, err
		}
		if n, _ := res.RowsAffected(); n == 1 {
			out.Values++
		} else {
			out.Skipped++
		}
	}
	if cmd.Type == cmdRotateKeySecrets {
		if err := e.applyRotatedSecrets(tx, c.Secrets, out); err != nil {
			return nil, err
		}
	}
	if len(c.Settings) > 0 {
		tx.Emit(fsm.Event{Kind: EvSettings})
	}
	return out, nil
}
