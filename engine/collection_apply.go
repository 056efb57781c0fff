package engine

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"svcd/engine/schema"
	"svcd/fsm"
)

// CollForApply is collection id as the command's transaction sees it,
// checked to be at version, the one the proposer validated against:
// ErrNotFound when it is gone, ErrSchemaMoved when it has changed since.
func (e *Engine) CollForApply(tx *fsm.Tx, id string, version int64) (*Coll, error) {
	var ver int64
	err := tx.QueryRow(`SELECT version FROM _svc_collections WHERE id = ?`, id).Scan(&ver)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	if ver != version {
		return nil, ErrSchemaMoved
	}
	return e.applied.get(tx, id, ver)
}

func nameTaken(tx *fsm.Tx, name, exceptID string) (bool, error) {
	var n int
	err := tx.QueryRow(`SELECT count(*) FROM _svc_collections WHERE name = ? COLLATE NOCASE AND id != ?`, name, exceptID).Scan(&n)
	if err != nil || n > 0 {
		return n > 0, err
	}
	err = tx.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE name = ? COLLATE NOCASE`, name).Scan(&n)
	return n > 0, err
}

// checkRelationTargets verifies that every relation target exists now.
func checkRelationTargets(tx *fsm.Tx, c *schema.Collection) error {
	for _, f := range c.Fields {
		if f.Type != schema.FieldRelation || f.Collection == c.ID {
			continue
		}
		var n int
		if err := tx.QueryRow(`SELECT count(*) FROM _svc_collections WHERE id = ? AND type != 'view'`, f.Collection).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return FieldError(f.Name, "relation target collection does not exist")
		}
	}
	return nil
}

func (sc *Schema) applyCollectionCreate(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := decodeCmd[collectionCreateCmd](cmd)
	if err != nil {
		return nil, err
	}
	col := &c.Collection
	if taken, err := nameTaken(tx, col.Name, col.ID); err != nil || taken {
		if err != nil {
			return nil, err
		}
		return nil, FieldError("name", "a collection with this name already exists")
	}
	if err := checkRelationTargets(tx, col); err != nil {
		return nil, err
	}
	ci, err := newCollInfo(col, c.ViewColumns)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", fsm.ErrHalt, err)
	}
	if col.Type == schema.TypeView {
		err = createView(tx, col)
	} else {
		err = createTable(tx, ci)
	}
	if err != nil {
		return nil, err
	}
	if _, err := tx.Exec(`INSERT INTO _svc_collections (id, name, type, version, data, created, updated)
		VALUES (?, ?, ?, 1, ?, ?, ?)`, col.ID, col.Name, col.Type, ci.stored(), col.Created, col.Updated); err != nil {
		return nil, err
	}
	if err := sc.e.collectionChanged(tx, CollectionChange{New: ci}); err != nil {
		return nil, err
	}
	tx.Emit(fsm.Event{Kind: EvSchema, Subject: col.ID})
	return nil, nil
}

func (sc *Schema) applyCollectionDelete(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := decodeCmd[collectionDeleteCmd](cmd)
	if err != nil {
		return nil, err
	}
	ci, err := sc.e.CollForApply(tx, c.ID, c.Version)
	if err != nil {
		return nil, err
	}
	refs, err := relationsTo(tx, ci.ID)
	if err != nil {
		return nil, err
	}
	if len(refs) > 0 {
		d := map[string]any{}
		for _, r := range refs {
			d[r] = "relation field references this collection"
		}
		return nil, &Error{Kind: KindConflict, Message: "The collection is referenced by relation fields of other collections", Details: d}
	}
	drop := "DROP TABLE "
	if ci.Type == schema.TypeView {
		drop = "DROP VIEW "
	}
	if _, err := tx.ExecDirect(drop + ci.table); err != nil {
		return nil, fmt.Errorf("drop %s: %w", ci.Name, err)
	}
	if _, err := tx.Exec(`DELETE FROM _svc_collections WHERE id = ?`, ci.ID); err != nil {
		return nil, err
	}
	if broken, err := brokenViews(tx); err != nil || len(broken) > 0 {
		if err != nil {
			return nil, err
		}
		d := map[string]any{}
		for _, b := range broken {
			d[b] = "view collection reads this collection"
		}
		return nil, &Error{Kind: KindConflict, Message: "View collections read this collection; change or delete them first", Details: d}
	}
	if err := sc.e.collectionChanged(tx, CollectionChange{Old: ci}); err != nil {
		return nil, err
	}
	tx.Emit(fsm.Event{Kind: EvSchema, Subject: ci.ID})
	return nil, nil
}

// relationsTo lists "collection.field" of relation fields pointing at id,
// read from the transaction (not from a cache) so the check is exact.
func relationsTo(tx *fsm.Tx, id string) ([]string, error) {
	rows, err := tx.Query(`SELECT id, version, data FROM _svc_collections WHERE id != ? ORDER BY name`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var oid, data string
		var ver int64
		if err := rows.Scan(&oid, &ver, &data); err != nil {
			return nil, err
		}
		ci, err := parseCollInfo(data, ver)
		if err != nil {
			return nil, err
		}
		for _, f := range ci.Fields {
			if f.Type == schema.FieldRelation && f.Collection == id {
				out = append(out, ci.Name+"."+f.Name)
			}
		}
	}
	return out, rows.Err()
}

func (sc *Schema) applyCollectionUpdate(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := decodeCmd[collectionUpdateCmd](cmd)
	if err != nil {
		return nil, err
	}
	old, err := sc.e.CollForApply(tx, c.ID, c.Version)
	if err != nil {
		return nil, err
	}
	col := &c.Collection
	col.Version = old.Version + 1
	if !strings.EqualFold(col.Name, old.Name) {
		if taken, err := nameTaken(tx, col.Name, col.ID); err != nil || taken {
			if err != nil {
				return nil, err
			}
			return nil, FieldError("name", "a collection with this name already exists")
		}
	}
	if err := checkRelationTargets(tx, col); err != nil {
		return nil, err
	}
	next, err := newCollInfo(col, c.ViewColumns)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", fsm.ErrHalt, err)
	}
	if col.Type == schema.TypeView {
		if _, err := tx.ExecDirect("DROP VIEW " + old.table); err != nil {
			return nil, err
		}
		if err := createView(tx, col); err != nil {
			return nil, err
		}
	} else if err := migrateTable(tx, old, next); err != nil {
		return nil, err
	}
	if !strings.EqualFold(col.Name, old.Name) || col.Type != schema.TypeView {
		if err := refreshViewQueries(tx); err != nil {
			return nil, err
		}
	}
	if _, err := tx.Exec(`UPDATE _svc_collections SET name = ?, version = ?, data = ?, updated = ? WHERE id = ?`,
		col.Name, col.Version, next.stored(), col.Updated, col.ID); err != nil {
		return nil, err
	}
	if err := sc.e.collectionChanged(tx, CollectionChange{Old: old, New: next}); err != nil {
		return nil, err
	}
	tx.Emit(fsm.Event{Kind: EvSchema, Subject: col.ID})
	return nil, nil
}
