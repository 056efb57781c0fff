package pbimport

import (
	"errors"

	"svcd/engine"
	"svcd/fsm"
)

// applyRows creates each row whose id is free, under its own savepoint,
// then sets its updated time as imported. The times come in the command:
// nothing here reads a clock.
func (m *Import) applyRows(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[rowsCmd](cmd)
	if err != nil {
		return nil, err
	}
	ci, err := m.core.CollForApply(tx, c.Coll, c.Ver)
	if err != nil {
		return nil, err
	}
	out := &Result{Created: []string{}, Skipped: []string{}, Failed: append([]RowFailed{}, c.Pre...)}
	for i := range c.Rows {
		r := &c.Rows[i]
		id := r.Create.ID()
		var n int
		if err := tx.QueryRow("SELECT count(*) FROM "+ci.Table()+" WHERE id = ?", id).Scan(&n); err != nil {
			return nil, err
		}
		if n > 0 {
			out.Skipped = append(out.Skipped, id)
			continue
		}
		err := tx.Nested(func() error {
			if err := m.core.Records().ApplyRecordCreate(tx, ci, &r.Create); err != nil {
				return err
			}
			_, err := tx.Exec("UPDATE "+ci.Table()+" SET updated = ? WHERE id = ?", r.Updated, id)
			return err
		})
		if err == nil {
			out.Created = append(out.Created, id)
			continue
		}
		// Only a domain error is the row's own; anything else (storage, a
		// schema that moved) fails the whole command.
		de := engine.AsError(err)
		if de == nil || errors.Is(err, engine.ErrSchemaMoved) {
			return nil, err
		}
		out.Failed = append(out.Failed, RowFailed{ID: id, Error: de.Message, Details: de.Details})
	}
	return out, nil
}
