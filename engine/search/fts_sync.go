package search

import (
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"svcd/engine"
	"svcd/engine/schema"
	"svcd/fsm"
)

// ftsSync keeps the index of ci in step with one record change; row is the
// record after the change (before it, for a delete). Called from
// the record-write hook inside the command's transaction.
func ftsSync(tx *fsm.Tx, kind string, ci *engine.Coll, row []any) error {
	sf := searchFields(ci)
	if len(sf) == 0 {
		return nil
	}
	id, _ := row[0].(string)
	var rid int64
	err := tx.QueryRow("SELECT rid FROM "+ftsIDTable(ci.ID)+" WHERE id = ?", id).Scan(&rid)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if kind == engine.EvRecordDelete {
			return nil
		}
		return ftsInsert(tx, ci, id, ftsTexts(ci, sf, row), true)
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
	if kind == engine.EvRecordDelete {
		if _, err := tx.Exec("DELETE FROM "+ftsIDTable(ci.ID)+" WHERE rid = ?", rid); err != nil {
			return err
		}
		return ftsFlush(tx, ci.ID)
	}
	return ftsInsertAt(tx, ci, rid, ftsTexts(ci, sf, row), true)
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

// ftsTexts is the indexed text of each searchable field of row.
func ftsTexts(ci *engine.Coll, sf []int, row []any) []any {
	texts := make([]any, len(sf))
	for n, i := range sf {
		texts[n] = ftsText(ci.RowFields()[i], row[3+i])
	}
	return texts
}

// ftsInsert indexes a record that has no index row yet.
func ftsInsert(tx *fsm.Tx, ci *engine.Coll, id string, texts []any, flush bool) error {
	res, err := tx.Exec("INSERT INTO "+ftsIDTable(ci.ID)+" (id) VALUES (?)", id)
	if err != nil {
		return err
	}
	rid, err := res.LastInsertId()
	if err != nil {
		return err
	}
	return ftsInsertAt(tx, ci, rid, texts, flush)
}

// ftsInsertAt writes the index row rid with texts (column cN gets
// texts[N]), and flushes it unless told otherwise.
func ftsInsertAt(tx *fsm.Tx, ci *engine.Coll, rid int64, texts []any, flush bool) error {
	cols := make([]string, len(texts))
	marks := make([]string, len(texts))
	for n := range texts {
		cols[n] = fmt.Sprintf("c%d", n)
		marks[n] = "?"
	}
	args := append([]any{rid}, texts...)
	if _, err := tx.Exec("INSERT INTO "+ftsTable(ci.ID)+" (rowid, "+strings.Join(cols, ", ")+", z) VALUES (?, "+strings.Join(marks, ", ")+", '"+ftsSentinel+"')", args...); err != nil {
		return err
	}
	if !flush {
		return nil
	}
	return ftsFlush(tx, ci.ID)
}

var htmlTag = regexp.MustCompile(`<[^>]*>`)

// ftsText is the indexed text of one stored value: editor HTML loses its
// tags (so markup is not matched), other values are indexed as stored.
func ftsText(f *engine.FieldInfo, v any) string {
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
