package search

import (
	"fmt"
	"strings"

	"svcd/engine"
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
// Both are written only inside the apply transaction (ftsSync from the
// record-write hook, ftsRebuild from the collection hook), so they commit
// or roll back with the change they reflect.

const ftsTokenizer = `tokenize = 'unicode61 remove_diacritics 2'`

// ftsTable is the quoted name of collection collID's FTS5 table.
func ftsTable(collID string) string { return quoteIdent("_svc_fts_" + collID) }

// ftsIDTable is the quoted name of collection collID's rowid-to-id table.
func ftsIDTable(collID string) string { return quoteIdent("_svc_ftsid_" + collID) }

// isSearchableField reports whether f is in the full-text index: a
// searchable text, email, url or editor field that is not encrypted.
func isSearchableField(f *engine.FieldInfo) bool {
	if !f.Searchable || f.Encrypted || f.Private() {
		return false
	}
	switch f.Type {
	case schema.FieldText, schema.FieldEmail, schema.FieldURL, schema.FieldEditor:
		return true
	}
	return false
}

// searchFields lists the indexes (into ci.RowFields()) of the searchable
// fields, in schema order: column cN of the index is searchFields()[N].
func searchFields(ci *engine.Coll) []int {
	if ci.Type == schema.TypeView {
		return nil
	}
	var out []int
	for i, f := range ci.RowFields() {
		if isSearchableField(f) {
			out = append(out, i)
		}
	}
	return out
}

// searchKey identifies the shape of the index: the ids of the searchable
// fields in order. The index is rebuilt when it changes.
func searchKey(ci *engine.Coll) string {
	var b strings.Builder
	fields := ci.RowFields()
	for _, i := range searchFields(ci) {
		b.WriteString(fields[i].ID + ":" + fields[i].Type)
		b.WriteByte(',')
	}
	return b.String()
}

// ftsCreate creates the empty index tables of ci.
func ftsCreate(tx *fsm.Tx, ci *engine.Coll, n int) error {
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
func ftsRebuild(tx *fsm.Tx, old, next *engine.Coll) error {
	key := searchKey(next)
	exists, err := ftsExists(tx, next.ID)
	if err != nil {
		return err
	}
	if old != nil && exists && searchKey(old) == key && key != "" {
		return nil
	}
	sf := searchFields(next)
	// Only the id and the indexed text of each record are kept.
	type doc struct {
		id    string
		texts []any
	}
	var docs []doc
	if old != nil && len(sf) > 0 {
		cols := make([]string, 0, len(sf)+1)
		cols = append(cols, "id")
		for _, i := range sf {
			cols = append(cols, next.RowFields()[i].Column())
		}
		rows, err := tx.QueryDirect("SELECT " + strings.Join(cols, ", ") + " FROM " + next.Table() + " ORDER BY id")
		if err != nil {
			return err
		}
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				rows.Close()
				return err
			}
			d := doc{id: engine.AsString(vals[0]), texts: make([]any, len(sf))}
			for n, i := range sf {
				d.texts[n] = ftsText(next.RowFields()[i], vals[1+n])
			}
			docs = append(docs, d)
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
	// One flush at the end: the whole rebuild is one command, so FTS5's
	// own flushes inside it fall at the same places on every replica.
	for _, d := range docs {
		if err := ftsInsert(tx, next, d.id, d.texts, false); err != nil {
			return err
		}
	}
	return ftsFlush(tx, next.ID)
}
