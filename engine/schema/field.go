package schema

import (
	"encoding/json"
	"sort"
)

// Field is one typed column of a collection. Its JSON form is flat:
// {id, name, type, required, unique, hidden, ...options}; only the options
// that apply to the field's type are kept (see FieldType.CleanOptions).
type Field struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Type     string `json:"type"`
	Required bool   `json:"required"`
	Unique   bool   `json:"unique"`
	Hidden   bool   `json:"hidden"`

	Options
}

// Options holds every option of every field type. Each field type reads the
// ones it understands and clears the rest in CleanOptions, so a stored field
// carries only what applies to it.
type Options struct {
	// text, editor, number, date, password: bounds (characters, value or
	// unix seconds).
	Min *float64 `json:"min,omitempty"`
	Max *float64 `json:"max,omitempty"`
	// text, editor: a Go (RE2) regular expression the whole value must match.
	Pattern string `json:"pattern,omitempty"`
	// text, editor, email, url: included in the full-text index.
	Searchable bool `json:"searchable,omitempty"`
	// text, email, url, json: encrypted at rest by the engine.
	Encrypted bool `json:"encrypted,omitempty"`
	// email, url: allow or deny lists of domains.
	DomainsOnly   []string `json:"domains_only,omitempty"`
	DomainsExcept []string `json:"domains_except,omitempty"`
	// number: only whole numbers.
	Integer bool `json:"integer,omitempty"`
	// autodate: set on create and/or on update.
	OnCreate bool `json:"on_create,omitempty"`
	OnUpdate bool `json:"on_update,omitempty"`
	// select: allowed values.
	Values []string `json:"values,omitempty"`
	// select, relation, file: several values.
	Multiple bool `json:"multiple,omitempty"`
	// select, relation: maximum number of values when multiple (0 = no cap).
	MaxSelect int `json:"max_select,omitempty"`
	// json: maximum encoded size in bytes (0 = no cap).
	MaxSize int64 `json:"max_size,omitempty"`
	// relation: target collection id (a name is accepted on input and
	// resolved to the id), and what deleting a target does.
	Collection string `json:"collection,omitempty"`
	Cascade    bool   `json:"cascade,omitempty"`
	Restrict   bool   `json:"restrict,omitempty"`
	// vector: fixed length, 1-4096.
	Dimensions int `json:"dimensions,omitempty"`
	// file: SPEC.md's file options (camelCase as SPEC.md names them).
	FileMaxSize    int64    `json:"maxSize,omitempty"`
	MimeTypes      []string `json:"mimeTypes,omitempty"`
	FileViewRule   *string  `json:"viewRule,omitempty"`
	RequireAuth    bool     `json:"requireAuth,omitempty"`
	Protected      bool     `json:"protected,omitempty"`
	OneTimeToken   bool     `json:"oneTimeToken,omitempty"`
	BindTokenIP    bool     `json:"bindTokenIp,omitempty"`
	AuditDownloads bool     `json:"auditDownloads,omitempty"`
}

// Column is the SQLite storage class a field type uses.
type Column string

const (
	ColText    Column = "TEXT"
	ColInteger Column = "INTEGER"
	ColReal    Column = "REAL"
	ColBlob    Column = "BLOB"
)

// Lookup resolves a collection by name or id while a schema is validated
// (relation targets). It returns nil when there is no such collection.
type Lookup interface {
	Collection(nameOrID string) *Collection
}

// FieldType is the behaviour of one field type. Each type lives in its own
// file (field_<type>.go) and is listed in TypeOf (types.go).
//
// Values move through three forms:
//   - input: what encoding/json produced from a request body decoded with
//     UseNumber (nil, bool, string, json.Number, []any, map[string]any);
//   - stored: what goes into SQLite (nil, int64, float64, string, []byte);
//   - output: JSON appended to a buffer by AppendJSON.
type FieldType interface {
	// Name is the type name used in the field JSON, for example "text".
	Name() string
	// Column is the SQLite column type.
	Column(f *Field) Column
	// OptionKeys are the JSON keys of the options that apply to this type
	// (what CleanOptions keeps); a definition naming another option for a
	// field of this type is refused (CheckDefinition).
	OptionKeys() []string
	// CleanOptions clears options that do not apply to this type and
	// validates the ones that do; msg != "" names the problem for
	// details[<field name>]. lookup resolves relation targets (may be nil when
	// no relation is involved).
	CleanOptions(f *Field, lookup Lookup) (msg string)
	// Normalize validates an input value and converts it to its stored form.
	// A nil input means null or absent. msg != "" is the validation message.
	Normalize(f *Field, in any) (stored any, msg string)
	// IsZero reports whether a stored value is empty for the purpose of
	// `required` (nil, "", empty array, false, ...).
	IsZero(f *Field, stored any) bool
	// AppendJSON appends the JSON output of a stored value (as scanned from
	// SQLite: nil, int64, float64, string or []byte) to buf.
	AppendJSON(buf []byte, f *Field, stored any) []byte
}

// sortedKeys returns the keys of m in order; helpers use it so nothing
// depends on map iteration order.
func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

var _ = json.Number("")
