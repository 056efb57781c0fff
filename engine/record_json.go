package engine

import (
	"strconv"

	"svcd/engine/schema"
)

// Record is one record ready to send: its JSON object and its entity tag.
type Record struct {
	JSON []byte
	ETag string
}

// projection is the set of field names a list keeps (nil keeps all).
type projection map[string]bool

// appendRecord writes a row (id, created, updated, fields...) as the record
// JSON: system fields first, then fields in schema order. Private fields are
// never written, hidden ones only for admins.
func (ci *Coll) appendRecord(buf []byte, row []any, admin bool, proj projection) []byte {
	return ci.appendRecordExpanded(buf, row, admin, proj, nil)
}

// appendRecordExpanded is appendRecord with an "expand" member holding the
// JSON object expand (nil: none).
func (ci *Coll) appendRecordExpanded(buf []byte, row []any, admin bool, proj projection, expand []byte) []byte {
	buf = append(buf, `{"id":`...)
	buf = schema.AppendJSONString(buf, AsString(row[0]))
	if proj.keeps("collectionId") {
		buf = append(buf, `,"collectionId":`...)
		buf = schema.AppendJSONString(buf, ci.ID)
	}
	if proj.keeps("collectionName") {
		buf = append(buf, `,"collectionName":`...)
		buf = schema.AppendJSONString(buf, ci.Name)
	}
	if ci.hasCreated && proj.keeps("created") {
		buf = append(buf, `,"created":`...)
		buf = appendInt(buf, row[1])
	}
	if ci.hasUpdated && proj.keeps("updated") {
		buf = append(buf, `,"updated":`...)
		buf = appendInt(buf, row[2])
	}
	for i, f := range ci.fields {
		if f.private || (f.Hidden && !admin) || !proj.keeps(f.Name) {
			continue
		}
		buf = append(buf, ',')
		buf = schema.AppendJSONString(buf, f.Name)
		buf = append(buf, ':')
		buf = f.typ.AppendJSON(buf, f.Field, ci.open(row[3+i]))
	}
	if expand != nil {
		buf = append(buf, `,"expand":`...)
		buf = append(buf, expand...)
	}
	return append(buf, '}')
}

func (p projection) keeps(name string) bool { return p == nil || p[name] }

func appendInt(buf []byte, v any) []byte {
	switch x := v.(type) {
	case int64:
		return strconv.AppendInt(buf, x, 10)
	case float64:
		return strconv.AppendInt(buf, int64(x), 10)
	}
	return append(buf, "null"...)
}

// AsString is a stored text or integer value as a string ("" otherwise).
func AsString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	case int64:
		return strconv.FormatInt(x, 10)
	}
	return ""
}

func (rs *Records) record(ci *Coll, row []any, admin bool) *Record {
	return &Record{JSON: ci.appendRecord(make([]byte, 0, 256), row, admin, nil), ETag: rs.e.etag(ci, row)}
}

// scanRow scans one row of ci.selectCols.
func (ci *Coll) scanRow(scan func(dest ...any) error) ([]any, error) {
	row := make([]any, 3+len(ci.fields))
	ptrs := make([]any, len(row))
	for i := range row {
		ptrs[i] = &row[i]
	}
	if err := scan(ptrs...); err != nil {
		return nil, err
	}
	return row, nil
}

// AsInt64 is a stored integer (or float) value as an int64 (0 otherwise).
func AsInt64(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case float64:
		return int64(x)
	}
	return 0
}
