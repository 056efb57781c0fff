package engine

import (
	"fmt"
	"strings"

	"svcd/engine/schema"
	"svcd/fsm"
)

func uniqueIndexName(collID, fieldID string) string {
	return quoteIdent("_svc_uniq_" + collID + "_" + fieldID)
}

func createdIndexName(collID string) string { return quoteIdent("_svc_created_" + collID) }

// createTable creates the table of a base or auth collection with its
// system index and unique indexes.
func createTable(tx *fsm.Tx, ci *Coll) error {
	cols := []string{"id TEXT PRIMARY KEY NOT NULL", "created INTEGER NOT NULL", "updated INTEGER NOT NULL"}
	for _, f := range ci.fields {
		cols = append(cols, f.col+" "+string(f.typ.Column(f.Field)))
	}
	stmts := []string{
		"CREATE TABLE " + ci.table + " (" + strings.Join(cols, ", ") + ")",
		"CREATE INDEX " + createdIndexName(ci.ID) + " ON " + ci.table + " (created, id)",
	}
	for _, s := range stmts {
		if _, err := tx.ExecDirect(s); err != nil {
			return fmt.Errorf("create table %s: %w", ci.Name, err)
		}
	}
	for _, f := range ci.fields {
		if f.Unique {
			if err := createUniqueIndex(tx, ci, f); err != nil {
				return err
			}
		}
	}
	return nil
}

// createUniqueIndex enforces uniqueness of non-empty values of f: null, ""
// and an empty list may repeat.
func createUniqueIndex(tx *fsm.Tx, ci *Coll, f *FieldInfo) error {
	expr := f.col
	if f.Type == schema.FieldEmail {
		expr += " COLLATE NOCASE"
	}
	_, err := tx.ExecDirect("CREATE UNIQUE INDEX " + uniqueIndexName(ci.ID, f.ID) + " ON " + ci.table +
		" (" + expr + ") WHERE " + f.col + " IS NOT NULL AND " + f.col + " NOT IN ('', '[]')")
	if err != nil {
		if isUniqueViolation(err) {
			return FieldError(f.Name, "has duplicate values; it cannot be made unique")
		}
		return fmt.Errorf("create unique index on %s.%s: %w", ci.Name, f.Name, err)
	}
	return nil
}

func dropUniqueIndex(tx *fsm.Tx, ci *Coll, f *FieldInfo) error {
	_, err := tx.ExecDirect("DROP INDEX IF EXISTS " + uniqueIndexName(ci.ID, f.ID))
	return err
}

// createView creates the SQL view of a view collection.
func createView(tx *fsm.Tx, c *schema.Collection) error {
	q := strings.TrimSuffix(strings.TrimSpace(c.ViewQuery), ";")
	if _, err := tx.ExecDirect("CREATE VIEW " + quoteIdent(c.Name) + " AS " + q); err != nil {
		return FieldError("view_query", "invalid query: "+err.Error())
	}
	return nil
}

// isUniqueViolation reports whether err is SQLite's unique constraint error.
func isUniqueViolation(err error) bool {
	return err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed")
}

// uniqueViolationColumn extracts the column from SQLite's message
// "UNIQUE constraint failed: table.column", or "".
func uniqueViolationColumn(err error) string {
	msg := err.Error()
	i := strings.Index(msg, "UNIQUE constraint failed: ")
	if i < 0 {
		return ""
	}
	rest := msg[i+len("UNIQUE constraint failed: "):]
	if j := strings.IndexAny(rest, ", "); j >= 0 {
		rest = rest[:j]
	}
	if k := strings.LastIndexByte(rest, '.'); k >= 0 {
		rest = rest[k+1:]
	}
	return rest
}
