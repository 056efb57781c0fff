package filter

import (
	"fmt"
	"strings"
	"time"

	"svcd/engine/schema"
)

// Collection is what the filter language needs to know of a collection.
// Fields include the system fields (id, created, updated).
type Collection struct {
	ID     string
	Name   string
	Fields []*FieldDef
	// Public is set when the collection's view rule admits everyone.
	Public bool
}

// FieldDef is one field of a Collection.
type FieldDef struct {
	Name     string
	Type     string // a schema field type, or "id"
	Multiple bool
	Target   string // relation: target collection id
	Hidden   bool   // hidden or private fields may only be filtered by admins
	Private  bool   // never filterable (passwords)
}

// Field returns the field named name, or nil.
func (c *Collection) Field(name string) *FieldDef {
	for _, f := range c.Fields {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// Resolver finds collections by name or id (relation targets,
// back-relations and @collection).
type Resolver interface {
	FilterCollection(nameOrID string) *Collection
}

// Env holds the request-time values of an evaluation: what `@request.*`
// and the datetime macros refer to. The engine captures it into commands,
// so a rule checked at apply time sees the values of the request that
// proposed it.
type Env struct {
	Now     time.Time
	Method  string
	Context string
	// Auth is the authenticated record's fields (id, collectionId,
	// collectionName, email, ...); nil for an anonymous caller.
	Auth map[string]any
	// Headers and Query use lower-case keys; header names have '-' as '_'.
	Headers map[string]string
	Query   map[string]string
	// Body is the request body's fields as stored values; Present tells
	// which keys the request carried.
	Body map[string]any
	// AllowHidden lets hidden fields be read: admins' filters and rules
	// (which admins write) may; other callers' filters may not.
	AllowHidden bool
	// Readable, when set, decides which collections an expression may
	// reach besides its own (relations, back-relations, @collection): a
	// caller's filter must not reveal what the caller cannot list. Nil
	// reaches every collection (rules, which admins write).
	Readable func(c *Collection) bool
	// AuthField, when set, tells whether some auth collection has a field
	// of that name: an @request.auth.<name> that no auth record can carry
	// does not compile (a rule naming it is invalid, and denies). Nil
	// leaves such a name reading as empty. The system members of an auth
	// record (IsAuthSystemName) are always known.
	AuthField func(name string) bool
}

// reaches reports whether the expression may read records of c.
func (e *Env) reaches(c *Collection) bool { return e.Readable == nil || e.Readable(c) }

// unreadable says why field f (reached as ref) cannot be read here, or ""
// when it can. A field the caller may not see reads as absent, so a
// caller's filter learns nothing of hidden or private fields; rules (which
// may read hidden fields) are told that a private one is never readable.
func (e *Env) unreadable(f *FieldDef, ref string) string {
	switch {
	case !e.AllowHidden && (f.Private || f.Hidden):
		return fmt.Sprintf("unknown field %q", ref)
	case f.Private:
		return fmt.Sprintf("field %q cannot be filtered", ref)
	}
	return ""
}

// authSystemNames are the members every authenticated caller's
// @request.auth carries, whatever its collection's fields.
var authSystemNames = map[string]bool{
	"id": true, "collectionId": true, "collectionName": true, "created": true, "updated": true,
	"email": true, "email_verified": true, "is_anonymous": true,
}

// IsAuthSystemName reports whether @request.auth.<name> is a member every
// auth record carries.
func IsAuthSystemName(name string) bool { return authSystemNames[name] }

// knowsAuthField reports whether @request.auth.<name> may name something.
func (e *Env) knowsAuthField(name string) bool {
	return e.AuthField == nil || authSystemNames[name] || e.AuthField(name)
}

// Kind classifies values for comparison and coercion.
type Kind uint8

const (
	kindAny Kind = iota // a literal or request value: takes the other side's kind
	kindNumber
	kindText
	kindJSON // a value inside a JSON field: its type is only known per row
)

// kindOf returns the comparison kind of a field type.
func kindOf(typ string) Kind {
	switch typ {
	case schema.FieldNumber, schema.FieldBool, schema.FieldDate, schema.FieldAutodate, "date_system":
		return kindNumber
	}
	return kindText
}

// viaName splits a back-relation `<collection>_via_<field>`.
func viaName(seg string) (coll, field string, ok bool) {
	i := strings.Index(seg, "_via_")
	if i <= 0 || i+5 >= len(seg) {
		return "", "", false
	}
	return seg[:i], seg[i+5:], true
}
