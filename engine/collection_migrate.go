package engine

import (
	"encoding/json"
	"fmt"
	"strings"

	"svcd/engine/schema"
	"svcd/fsm"
)

// migrateTable changes the table of old into the shape of next inside the
// command's transaction: rename the table, drop, rename, add and convert
// columns, and keep the unique indexes in step. Fields are matched by id.
func migrateTable(tx *fsm.Tx, old, next *Coll) error {
	if old.Name != next.Name {
		// Through a temporary name, so a change of case alone works too.
		tmp := quoteIdent("_svc_rename_" + old.ID)
		for _, s := range []string{
			"ALTER TABLE " + old.table + " RENAME TO " + tmp,
			"ALTER TABLE " + tmp + " RENAME TO " + next.table,
		} {
			if _, err := tx.ExecDirect(s); err != nil {
				return ddlError("name", err)
			}
		}
	}
	table := next.table
	oldByID := map[string]*FieldInfo{}
	for _, f := range old.fields {
		if !f.system {
			oldByID[f.ID] = f
		}
	}
	nextIDs := map[string]bool{}
	for _, f := range next.fields {
		nextIDs[f.ID] = true
	}
	// Drop removed fields first: their names may be reused below.
	for _, f := range old.fields {
		if f.system || nextIDs[f.ID] {
			continue
		}
		if err := dropUniqueIndex(tx, old, f); err != nil {
			return err
		}
		if _, err := tx.ExecDirect("ALTER TABLE " + table + " DROP COLUMN " + f.col); err != nil {
			return ddlError(f.Name, err)
		}
	}
	// Renames go through temporary names first, so two fields may swap
	// names in one change.
	renamed := map[string]bool{}
	for _, nf := range next.fields {
		if of, ok := oldByID[nf.ID]; ok && !nf.system && of.Name != nf.Name && !needsConversion(of, nf) {
			tmp := quoteIdent("_svc_ren_" + nf.ID)
			if _, err := tx.ExecDirect("ALTER TABLE " + table + " RENAME COLUMN " + of.col + " TO " + tmp); err != nil {
				return ddlError(nf.Name, err)
			}
			renamed[nf.ID] = true
		}
	}
	for _, nf := range next.fields {
		if renamed[nf.ID] {
			if _, err := tx.ExecDirect("ALTER TABLE " + table + " RENAME COLUMN " + quoteIdent("_svc_ren_"+nf.ID) + " TO " + nf.col); err != nil {
				return ddlError(nf.Name, err)
			}
		}
	}
	for _, nf := range next.fields {
		if nf.system {
			continue
		}
		of, existed := oldByID[nf.ID]
		if !existed {
			if _, err := tx.ExecDirect("ALTER TABLE " + table + " ADD COLUMN " + nf.col + " " + string(nf.typ.Column(nf.Field))); err != nil {
				return ddlError(nf.Name, err)
			}
			if nf.Unique {
				if err := createUniqueIndex(tx, next, nf); err != nil {
					return err
				}
			}
			continue
		}
		convert := needsConversion(of, nf)
		if of.Unique && (!nf.Unique || convert || of.Type != nf.Type) {
			if err := dropUniqueIndex(tx, old, of); err != nil {
				return err
			}
		}
		if convert {
			if err := convertColumn(tx, table, of, nf); err != nil {
				return err
			}
		}
		if nf.Unique && (!of.Unique || convert || of.Type != nf.Type) {
			if err := createUniqueIndex(tx, next, nf); err != nil {
				return err
			}
		}
	}
	return nil
}

// needsConversion reports whether stored values of of must be rewritten to
// be values of nf.
func needsConversion(of, nf *FieldInfo) bool {
	return of.Type != nf.Type || of.Multiple != nf.Multiple || of.Dimensions != nf.Dimensions ||
		of.typ.Column(of.Field) != nf.typ.Column(nf.Field)
}

// convertColumn rewrites a column into a new type through a temporary
// column. Each value is converted by the field types themselves (pure
// functions), so every replica computes the same result; a value the new
// type rejects becomes null.
func convertColumn(tx *fsm.Tx, table string, of, nf *FieldInfo) error {
	tmp := quoteIdent("_svc_tmp_" + nf.ID)
	if _, err := tx.ExecDirect("ALTER TABLE " + table + " ADD COLUMN " + tmp + " " + string(nf.typ.Column(nf.Field))); err != nil {
		return ddlError(nf.Name, err)
	}
	rows, err := tx.QueryDirect("SELECT id, " + of.col + " FROM " + table + " WHERE " + of.col + " IS NOT NULL ORDER BY id")
	if err != nil {
		return err
	}
	type pair struct {
		id string
		v  any
	}
	var updates []pair
	for rows.Next() {
		var id string
		var v any
		if err := rows.Scan(&id, &v); err != nil {
			rows.Close()
			return err
		}
		if nv := convertValue(of, nf, v); nv != nil {
			updates = append(updates, pair{id, nv})
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, u := range updates {
		if _, err := tx.ExecDirect("UPDATE "+table+" SET "+tmp+" = ? WHERE id = ?", u.v, u.id); err != nil {
			return err
		}
	}
	for _, s := range []string{
		"ALTER TABLE " + table + " DROP COLUMN " + of.col,
		"ALTER TABLE " + table + " RENAME COLUMN " + tmp + " TO " + nf.col,
	} {
		if _, err := tx.ExecDirect(s); err != nil {
			return ddlError(nf.Name, err)
		}
	}
	return nil
}

func convertValue(of, nf *FieldInfo, v any) any {
	switch nf.Type {
	case schema.FieldPassword, schema.FieldFile:
		return nil
	case schema.FieldAutodate:
		if n, ok := v.(int64); ok {
			return n
		}
		return nil
	}
	raw := of.typ.AppendJSON(nil, of.Field, v)
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	var in any
	if err := dec.Decode(&in); err != nil {
		return nil
	}
	switch x := in.(type) {
	case bool:
		if nf.Type == schema.FieldNumber {
			in = json.Number(map[bool]string{true: "1", false: "0"}[x])
		}
	case []any:
		if len(x) == 1 && !nf.Multiple {
			in = x[0]
		}
	}
	if out, msg := nf.typ.Normalize(nf.Field, in); msg == "" {
		return out
	}
	if _, isString := in.(string); !isString {
		if out, msg := nf.typ.Normalize(nf.Field, string(raw)); msg == "" {
			return out
		}
	}
	return nil
}

// ddlError turns a schema change SQLite refused into a 422 on the field.
func ddlError(field string, err error) error {
	if _, ok := err.(*Error); ok {
		return err
	}
	return FieldError(field, fmt.Sprintf("cannot migrate: %v", err))
}
