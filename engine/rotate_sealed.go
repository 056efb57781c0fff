package engine

import (
	"fmt"

	"svcd/engine/crypt"
	"svcd/fsm"
)

// SealedColumn names a column of a module's internal table whose values
// are sealed under the encryption key (a webhook's signing secret), each
// row found by KeyColumn. Key rotation re-seals them with the secret
// settings and the encrypted fields, so the old key can be dropped
// afterwards without leaving a value only it opens.
type SealedColumn struct {
	Table, KeyColumn, Column string
}

// RegisterSealedColumn adds c to what key rotation re-seals.
func (e *Engine) RegisterSealedColumn(c SealedColumn) {
	e.reg.mustOpen("sealed column " + c.Table + "." + c.Column)
	e.reg.sealedColumns = append(e.reg.sealedColumns, c)
}

// rotatedSecret is one re-sealed value of a registered column.
type rotatedSecret struct {
	Table  string `json:"table"`
	Column string `json:"column"`
	Key    string `json:"key"`
	Old    string `json:"old"`
	New    string `json:"new"`
}

// rotateSecrets reads the registered columns' values not yet sealed under
// the current key. Plain values are left plain: a module decides what it
// seals (a webhook secret stored before a key was set stays as it is).
func (e *Engine) rotateSecrets(r *fsm.Reader, cmd *rotateCmd) error {
	for _, c := range e.reg.sealedColumns {
		rows, err := r.Query(`SELECT `+quoteIdent(c.KeyColumn)+`, `+quoteIdent(c.Column)+` FROM `+quoteIdent(c.Table)+
			` WHERE substr(`+quoteIdent(c.Column)+`, 1, length(?)) = ? ORDER BY 1`, crypt.Prefix, crypt.Prefix)
		if err != nil {
			return err
		}
		for rows.Next() {
			var key, v string
			if err := rows.Scan(&key, &v); err != nil {
				rows.Close()
				return err
			}
			if e.current(v) {
				continue
			}
			n, err := e.reseal(v)
			if err != nil {
				rows.Close()
				return fmt.Errorf("%s %s: %w", c.Table, key, err)
			}
			cmd.Secrets = append(cmd.Secrets, rotatedSecret{Table: c.Table, Column: c.Column, Key: key, Old: v, New: n})
		}
		if err := rows.Close(); err != nil {
			return err
		}
	}
	return nil
}

// applyRotatedSecrets writes the re-sealed values whose stored value is
// still the one read, for registered columns only (the command names the
// table and column).
func (e *Engine) applyRotatedSecrets(tx *fsm.Tx, secrets []rotatedSecret, out *RotateResult) error {
	for _, s := range secrets {
		var col *SealedColumn
		for i, c := range e.reg.sealedColumns {
			if c.Table == s.Table && c.Column == s.Column {
				col = &e.reg.sealedColumns[i]
				break
			}
		}
		if col == nil {
			out.Skipped++ // not a sealed column of this binary
			continue
		}
		res, err := tx.Exec(`UPDATE `+quoteIdent(col.Table)+` SET `+quoteIdent(col.Column)+` = ? WHERE `+
			quoteIdent(col.KeyColumn)+` = ? AND `+quoteIdent(col.Column)+` = ?`, s.New, s.Key, s.Old)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 1 {
			out.Secrets++
		} else {
			out.Skipped++
		}
	}
	return nil
}
