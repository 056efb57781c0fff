package csv

import (
	"encoding/json"
	"strings"

	"svcd/engine"
	"svcd/engine/schema"
)

// CSV cells (SPEC.md "CSV"). A cell holds one field's value as text:
//   - null is the empty cell;
//   - a JSON string is its text (text, editor, email, url, date-free
//     strings, a single select or relation, a single file name), behind a
//     `'` when a spreadsheet would run it as a formula (formula.go);
//   - numbers and booleans are their JSON literals (dates are unix seconds);
//   - objects and arrays are their JSON text (geoPoint, vector, multiple
//     select, relation or file);
//   - a json field's cell is always its value's JSON text, so the value
//     "abc" (a JSON string) reads `"abc"` and survives a round trip.
//
// Decoding is the inverse: what encoding wrote reads back as the same
// stored value through the field type's ordinary validation.

// csvSkipped reports whether a field takes no part in CSV: autodates are
// set by the server, passwords are never exported, private values never
// leave it. File fields are exported (their stored names) but not
// imported: a file is attached by upload only (see csvImportField).
func csvSkipped(f *engine.FieldInfo) bool {
	return f.Private() || f.Type == schema.FieldAutodate || f.Type == schema.FieldPassword
}

// csvImportField reports whether an import column feeds field f. Files
// are upload-only: a stored name in a cell would point at a blob another
// record owns (deleting either record would delete the other's file).
// Autodates are the server's. A password column is taken as plain text
// and hashed like any create's (the export never writes one).
func csvImportField(f *engine.FieldInfo) bool {
	return !f.System() && f.Type != schema.FieldAutodate && f.Type != schema.FieldFile
}

// appendCSVCell appends the cell text of a stored (opened) value of f.
// scratch is reused for the field type's JSON rendering and returned.
func appendCSVCell(cell, scratch []byte, f *schema.Field, typ schema.FieldType, stored any) (out, scratchOut []byte) {
	scratch = typ.AppendJSON(scratch[:0], f, stored)
	switch {
	case string(scratch) == "null":
		return cell, scratch
	case f.Type == schema.FieldJSON:
		return append(cell, scratch...), scratch
	case len(scratch) > 0 && scratch[0] == '"':
		var s string
		if err := json.Unmarshal(scratch, &s); err == nil {
			return appendCSVText(cell, s), scratch
		}
	}
	return append(cell, scratch...), scratch
}

// decodeCSVCell turns a cell into the input a create body would carry for
// f (what encoding/json with UseNumber makes of a request body). msg is
// set when the cell cannot be an input at all; everything else is judged
// by the field type's validation, as for any create. A cell taken as text
// loses the formula guard's `'` (formula.go), whatever the field type:
// a hand-written '-5 in a number column reads as -5.
func decodeCSVCell(f *schema.Field, cell string) (in any, msg string) {
	if cell == "" {
		return nil, ""
	}
	switch f.Type {
	case schema.FieldJSON:
		return decodeCellJSON(cell)
	case schema.FieldGeoPoint, schema.FieldVector:
		return decodeCellJSON(cell)
	case schema.FieldSelect, schema.FieldRelation, schema.FieldFile:
		if f.Multiple && strings.HasPrefix(strings.TrimSpace(cell), "[") {
			return decodeCellJSON(cell)
		}
	}
	return csvUnescapeText(cell), ""
}

func decodeCellJSON(cell string) (any, string) {
	if !json.Valid([]byte(cell)) {
		return nil, "must be valid JSON"
	}
	dec := json.NewDecoder(strings.NewReader(cell))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, "must be valid JSON"
	}
	return v, ""
}

// csvHeaderCell is a header cell's column name: the byte-order mark a
// spreadsheet may put before the first one is dropped.
func csvHeaderCell(s string) string {
	return strings.TrimPrefix(s, "\ufeff")
}
