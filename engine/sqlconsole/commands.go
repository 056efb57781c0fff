package sqlconsole

import (
	"database/sql"
	"errors"

	"svcd/engine"
	"svcd/fsm"
)

// Command types of the module (engine/DESIGN.md lists every owner's).
// Numbers are never reused; 138-139 are kept for the module.
const (
	// cmdQuerySave creates a saved query or replaces its owner's one.
	cmdQuerySave fsm.Type = 135
	// cmdQueryDelete deletes a saved query of its owner.
	cmdQueryDelete fsm.Type = 136
	// cmdWrite runs one data-changing statement on every replica (Write).
	cmdWrite fsm.Type = 137
)

func (c *Console) registerCommands() {
	engine.RegisterResult[Query](c.core, "sqlconsole.query")
	engine.RegisterResult[writeResult](c.core, "sqlconsole.write")
	c.core.Command(cmdQuerySave, "sqlconsole.query_save", c.applySave)
	c.core.Command(cmdQueryDelete, "sqlconsole.query_delete", c.applyDelete)
	c.core.Command(cmdWrite, "sqlconsole.write", c.applyWrite)
}

// saveCmd creates (Create) or replaces query Q, which names its owner.
type saveCmd struct {
	Q      Query `json:"q"`
	Create bool  `json:"create"`
}

// deleteCmd deletes query ID of Owner.
type deleteCmd struct {
	ID    string `json:"id"`
	Owner string `json:"owner"`
}

func (c *Console) applySave(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	s, err := engine.DecodeCmd[saveCmd](cmd)
	if err != nil {
		return nil, err
	}
	q := s.Q
	params := string(q.Params)
	if s.Create {
		_, err := tx.Exec(`INSERT INTO _svc_sql_queries (id, owner_id, name, sql, mode, params, created, updated)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, q.ID, q.OwnerID, q.Name, q.SQL, q.Mode, params, q.Created, q.Updated)
		return &q, err
	}
	if err := ownerCheck(tx, q.ID, q.OwnerID, &q.Created); err != nil {
		return nil, err
	}
	_, err = tx.Exec(`UPDATE _svc_sql_queries SET name = ?, sql = ?, mode = ?, params = ?, updated = ? WHERE id = ?`,
		q.Name, q.SQL, q.Mode, params, q.Updated, q.ID)
	return &q, err
}

func (c *Console) applyDelete(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	d, err := engine.DecodeCmd[deleteCmd](cmd)
	if err != nil {
		return nil, err
	}
	var created int64
	if err := ownerCheck(tx, d.ID, d.Owner, &created); err != nil {
		return nil, err
	}
	_, err = tx.Exec(`DELETE FROM _svc_sql_queries WHERE id = ?`, d.ID)
	return nil, err
}

// ownerCheck fails unless query id exists and belongs to owner; it reads
// the query's creation time into created.
func ownerCheck(tx *fsm.Tx, id, owner string, created *int64) error {
	var got string
	err := tx.QueryRow(`SELECT owner_id, created FROM _svc_sql_queries WHERE id = ?`, id).Scan(&got, created)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return errQueryNotFound
	case err != nil:
		return err
	case got != owner:
		return errNotOwner
	}
	return nil
}
