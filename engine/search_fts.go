package engine

import (
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"svcd/engine/schema"
	"svcd/fsm"
)

// The full-text index of a collection with searchable fields is two
// tables named by the collection's id (so a rename leaves them alone):
//
//   - _svc_fts_<id>: a contentless FTS5 table (content='',
//     contentless_delete=1), one column per searchable field in schema
//     order (c0, c1, ...), tokenized by unicode61 with diacritics removed,
//     plus the column z holding one constant token in every row. Queries
//     always name the c columns, so z never matches; it exists because
//     FTS5 counts a row without any token as pending without flushing it,
//     and that count would then land in whichever segment is flushed next:
//     in another transaction on a replica that groups commands otherwise,
//     making the index bytes differ between replicas.
//     Contentless, because the text already lives in the record table: the
//     index holds only its tokens, and a row is deleted by rowid without
//     supplying the old text (which an external-content table would need).
//   - _svc_ftsid_<id>: the record id of each index rowid. Its INTEGER
//     PRIMARY KEY is assigned max+1 by SQLite, so it is identical on every
//     replica applying the same log, and it survives the page-by-page copy
//     of snapshots and restores.
//
// Both are written only inside the apply transaction (ftsSync from
// recordWritten, ftsRebuild from collection DDL), so they commit or roll
// back with the change they reflect.

const ftsTokenizer = `tokenize = 'unicode61 remove_diacritics 2'`

func ftsTable(collID string) string { return quoteIdent("_svc_fts_" + collID) }
func ftsIDTable(collID string) string {
	return quoteIdent("_svc_ftsid_" + collID)
}

// isSearchableField reports whether f is in the full-text index: a
// searchable text, email, url or editor field that is not encrypted.
func isSearchableField(f *fieldInfo) bool {
	if !f.Searchable || f.Encrypted || f.private {
		return false
	}
	switch f.Type {
	case schema.FieldText, schema.FieldEmail, schema.FieldURL, schema.FieldEditor:
		return true
	}
	return false
}

// searchFields lists the indexes (into ci.fields) of the searchable
// fields, in schema order: column cN of the index is searchFields()[N].
func (ci *collInfo) searchFields() []int {
	if ci.Type == schema.TypeView {
		return nil
	}
	var out []int
	for i, f := range ci.fields {
		if isSearchableField(f) {
			out = append(out, i)
		}
	}
	return out
}

// searchKey identifies the shape of the index: the ids of the searchable
// fields in order. The index is rebuilt when it changes.
func (ci *collInfo) searchKey() string {
	var b strings.Builder
	for _, i := range ci.searchFields() {
		b.WriteString(ci.fields[i].ID + ":" + ci.fields[i].Type)
		b.WriteByte(',')
	}
	return b.String()
}

// ftsCreate creates the empty index tables of ci.
func ftsCreate(tx *fsm.Tx, ci *collInfo, n int) error {
	cols := make([]string, n)
	for i := range cols {
		cols[i] = fmt.Sprintf("c%d", i)
	}
	for _, s := range []string{
		"CREATE VIRTUAL TABLE " + ftsTable(ci.ID) + " USING fts5(" + strings.Join(cols, ", ") +
			", z, content='', contentless_delete=1, " + ftsTokenizer + ")",
		"CREATE TABLE " + ftsIDTable(ci.ID) + " (rid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE)",
	} {
		if _, err := tx.ExecDirect(s); err != nil {
			return fmt.Errorf("create search index of %s: %w", ci.Name, err)
		}
	}
	return nil
}

// ftsDrop drops the index tables of collection id, if any.
func ftsDrop(tx *fsm.Tx, collID string) error {
	for _, s := range []string{"DROP TABLE IF EXISTS " + ftsTable(collID), "DROP TABLE IF EXISTS " + ftsIDTable(collID)} {
		if _, err := tx.ExecDirect(s); err != nil {
			return err
		}
	}
	return nil
}

// ftsExists reports whether collection id has index tables.
func ftsExists(tx *fsm.Tx, collID string) (bool, error) {
	var n int
	err := tx.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE name = ?`, "_svc_ftsid_"+collID).Scan(&n)
	return n > 0, err
}

// ftsRebuild brings the index of a base or auth collection in line with
// next (old is nil on create): nothing when the searchable fields are the
// same and the index exists; otherwise the index is dropped and, when
// next has searchable fields, built again from every record in id order.
//
// It must be the last fallible step of its command: SQLite (3.54) leaves
// an FTS5 table created, or dropped and created again, inside a savepoint
// that is then rolled back in a broken state for the rest of the
// transaction (a later SAVEPOINT fails, writes report constraint errors).
// So the records are read before any DDL, and callers run it after every
// check that could fail the command.
func ftsRebuild(tx *fsm.Tx, old, next *collInfo) error {
	key := next.searchKey()
	exists, err := ftsExists(tx, next.ID)
	if err != nil {
		return err
	}
	if old != nil && exists && old.searchKey() == key && key != "" {
		return nil
	}
	sf := next.searchFields()
	var all [][]any
	if old != nil && len(sf) > 0 {
		rows, err := tx.QueryDirect("SELECT " + next.selectCols + " FROM " + next.table + " ORDER BY id")
		if err != nil {
			return err
		}
		for rows.Next() {
			row, err := next.scanRow(rows.Scan)
			if err != nil {
				rows.Close()
				return err
			}
			all = append(all, row)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
	}
	if exists {
		if err := ftsDrop(tx, next.ID); err != nil {
			return err
		}
	}
	if len(sf) == 0 {
		return nil
	}
	if err := ftsCreate(tx, next, len(sf)); err != nil {
		return err
	}
	for _, row := range all {
		if err := ftsInsert(tx, next, sf, row); err != nil {
			return err
		}
	}
	return nil
}

// ftsSync keeps the index of ci in step with one record change; row is the
// record after the change (before it, for a delete). Called from
// recordWritten inside the command's transaction.
func ftsSync(tx *fsm.Tx, kind string, ci *collInfo, row []any) error {
	sf := ci.searchFields()
	if len(sf) == 0 {
		return nil
	}
	id, _ := row[0].(string)
	var rid int64
	err := tx.QueryRow("SELECT rid FROM "+ftsIDTable(ci.ID)+" WHERE id = ?", id).Scan(&rid)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if kind == EvRecordDelete {
			return nil
		}
		return ftsInsert(tx, ci, sf, row)
	case err != nil:
		// A collection made searchable before this version has no index
		// until its next schema change (ftsRebuild builds it then).
		if exists, xerr := ftsExists(tx, ci.ID); xerr == nil && !exists {
			return nil
		}
		return fmt.Errorf("search index of %s: %w", ci.Name, err)
	}
	if _, err := tx.Exec("DELETE FROM "+ftsTable(ci.ID)+" WHERE rowid = ?", rid); err != nil {
		return err
	}
	if kind == EvRecordDelete {
		if _, err := tx.Exec("DELETE FROM "+ftsIDTable(ci.ID)+" WHERE rid = ?", rid); err != nil {
			return err
		}
		return ftsFlush(tx, ci.ID)
	}
	return ftsInsertAt(tx, ci, sf, row, rid)
}

// ftsFlush writes the index's pending changes to its tables now. FTS5
// otherwise flushes when the transaction commits or a savepoint opens, so
// the layout of its segments (which the state digest compares) would
// depend on how many commands share one SQLite transaction; flushing after
// each change makes it depend on the log alone.
func ftsFlush(tx *fsm.Tx, collID string) error {
	t := ftsTable(collID)
	_, err := tx.Exec("INSERT INTO " + t + " (" + t + ") VALUES ('flush')")
	return err
}

// ftsSentinel is the token of column z in every index row.
const ftsSentinel = "z"

// ftsInsert indexes a record that has no index row yet.
func ftsInsert(tx *fsm.Tx, ci *collInfo, sf []int, row []any) error {
	res, err := tx.Exec("INSERT INTO "+ftsIDTable(ci.ID)+" (id) VALUES (?)", row[0])
	if err != nil {
		return err
	}
	rid, err := res.LastInsertId()
	if err != nil {
		return err
	}
	return ftsInsertAt(tx, ci, sf, row, rid)
}

// ftsInsertAt writes the index row rid of a record.
func ftsInsertAt(tx *fsm.Tx, ci *collInfo, sf []int, row []any, rid int64) error {
	args := make([]any, 1, 1+len(sf))
	args[0] = rid
	marks := make([]string, len(sf))
	cols := make([]string, len(sf))
	for n, i := range sf {
		cols[n] = fmt.Sprintf("c%d", n)
		marks[n] = "?"
		args = append(args, ftsText(ci.fields[i], row[3+i]))
	}
	if _, err := tx.Exec("INSERT INTO "+ftsTable(ci.ID)+" (rowid, "+strings.Join(cols, ", ")+", z) VALUES (?, "+strings.Join(marks, ", ")+", '"+ftsSentinel+"')", args...); err != nil {
		return err
	}
	return ftsFlush(tx, ci.ID)
}

var htmlTag = regexp.MustCompile(`<[^>]*>`)

// ftsText is the indexed text of one stored value: editor HTML loses its
// tags (so markup is not matched), other values are indexed as stored.
func ftsText(f *fieldInfo, v any) string {
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case []byte:
		s = string(x)
	case nil:
		return ""
	default:
		s = fmt.Sprint(x)
	}
	if f.Type == schema.FieldEditor {
		s = htmlTag.ReplaceAllString(s, " ")
	}
	return s
}
