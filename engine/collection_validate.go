package engine

import (
	"fmt"
	"regexp"
	"strings"

	"svcd/engine/schema"
)

var (
	collectionNamePattern = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]{0,62}$`)
	fieldIDPattern        = regexp.MustCompile(`^[a-zA-Z0-9_]{1,64}$`)
)

// reservedNames are path segments of the API that a collection may not take.
var reservedNames = []string{
	"admin", "auth", "files", "batch", "realtime", "mcp", "custom", "metrics",
	"notifications", "docs", "openapi.json", "flags", "_", "collections",
}

// maxRuleLength bounds a stored rule like the filter language bounds filters.
const maxRuleLength = 4096

func validateCollectionName(name string) string {
	switch {
	case name == "":
		return "cannot be blank"
	case !collectionNamePattern.MatchString(name):
		return "must start with a letter or underscore and contain only letters, digits and underscores (at most 63)"
	}
	lower := strings.ToLower(name)
	for _, r := range reservedNames {
		if lower == r {
			return fmt.Sprintf("%q is reserved", name)
		}
	}
	if strings.HasPrefix(lower, "_svc") || strings.HasPrefix(lower, "sqlite_") || strings.HasPrefix(lower, "svc_") {
		return "names starting with _svc, svc_ or sqlite_ are reserved"
	}
	return ""
}

// systemName reports whether name is one of the names a module may give
// the collections it creates (CreateSystemCollection): svc_ and a valid
// name after it.
func systemName(name string) bool {
	return strings.HasPrefix(name, "svc_") && collectionNamePattern.MatchString(name)
}

// nameProblem is why c may not have its name: a reserved name is
// accepted for a module's collection (system) and for a collection that
// keeps the name it has (old).
func nameProblem(c *schema.Collection, old *Coll, system bool) string {
	msg := validateCollectionName(c.Name)
	if msg != "" && systemName(c.Name) && (system || (old != nil && old.Name == c.Name)) {
		return ""
	}
	return msg
}

// lookupWith resolves relation targets against the current collections plus
// the one being saved (a collection may relate to itself).
type lookupWith struct {
	set  *schemaSet
	self *schema.Collection
	// pending are the collections a schema plan saves before this one
	// (PrepareCreate, PrepareUpdate): they win over the committed set.
	pending []*schema.Collection
}

func (l lookupWith) Collection(nameOrID string) *schema.Collection {
	if l.self != nil && (nameOrID == l.self.ID || strings.EqualFold(nameOrID, l.self.Name)) {
		return l.self
	}
	for _, p := range l.pending {
		if nameOrID == p.ID || strings.EqualFold(nameOrID, p.Name) {
			return p
		}
	}
	return l.set.Collection(nameOrID)
}

// validateCollection checks c (already normalised by the caller) and fills
// field ids; old is the current definition for an update, or nil; system
// is set for a module's own collection (CreateSystemCollection).
func (sc *Schema) validateCollection(c *schema.Collection, old *Coll, system bool) *Error {
	return sc.validateCollectionIn(c, old, system, nil)
}

// validateCollectionIn is validateCollection with the collections a
// schema plan saves before c (relation targets resolve against them).
func (sc *Schema) validateCollectionIn(c *schema.Collection, old *Coll, system bool, pending []*schema.Collection) *Error {
	d := map[string]string{}
	if msg := nameProblem(c, old, system); msg != "" {
		d["name"] = msg
	} else if other := sc.e.Coll(c.Name); other != nil && (old == nil || other.ID != old.ID) {
		d["name"] = "a collection with this name already exists"
	}
	switch c.Type {
	case schema.TypeBase, schema.TypeAuth, schema.TypeView:
	default:
		d["type"] = "must be base, auth or view"
	}
	if old != nil && c.Type != old.Type {
		d["type"] = "cannot be changed"
	}
	for name, r := range map[string]*string{"view_rule": c.ViewRule, "create_rule": c.CreateRule, "update_rule": c.UpdateRule, "delete_rule": c.DeleteRule} {
		if r != nil && len(*r) > maxRuleLength {
			d[name] = fmt.Sprintf("must be at most %d characters", maxRuleLength)
		}
	}
	if c.Type == schema.TypeView {
		if strings.TrimSpace(c.ViewQuery) == "" {
			d["view_query"] = "cannot be blank for a view collection"
		}
	} else if c.ViewQuery != "" {
		d["view_query"] = "only view collections have a query"
	}
	if c.Type == schema.TypeAuth {
		if c.AuthOptions == nil {
			c.AuthOptions = schema.DefaultAuthOptions()
		}
	} else {
		c.AuthOptions = nil
	}
	if c.Type != schema.TypeView {
		sc.validateFields(c, old, d, pending)
	}
	if len(d) > 0 {
		return ValidationError(d)
	}
	return nil
}

func (sc *Schema) validateFields(c *schema.Collection, old *Coll, d map[string]string, pending []*schema.Collection) {
	lookup := lookupWith{set: sc.e.schema.Load(), self: c, pending: pending}
	seen := map[string]bool{}
	seenID := map[string]bool{}
	for i, f := range c.Fields {
		key := fmt.Sprintf("fields.%d", i)
		if f == nil {
			d[key] = "must be an object"
			continue
		}
		if f.ID == "" && old != nil {
			// A field sent without id keeps the id of the same-named field.
			if of := old.Collection.Field(f.Name); of != nil {
				f.ID = of.ID
			}
		}
		if f.ID == "" {
			f.ID = "fld_" + NewID()
		} else if old != nil && old.Collection.FieldByID(f.ID) == nil && !strings.HasPrefix(f.ID, "fld_") {
			d[key+".id"] = "unknown field id"
		}
		if seenID[f.ID] {
			d[key+".id"] = "duplicate field id"
		}
		seenID[f.ID] = true
		if !fieldIDPattern.MatchString(f.ID) {
			d[key+".id"] = "must be 1-64 letters, digits or underscores"
		}
		if msg := schema.ValidateField(f, lookup); msg != "" {
			d[key] = msg
			continue
		}
		if f.Type == schema.FieldRelation {
			if t := lookup.Collection(f.Collection); t != nil && t.Type == schema.TypeView {
				d[key+".collection"] = "a relation cannot target a view collection"
			}
		}
		switch {
		case f.Encrypted && sc.e.keyring == nil:
			d[key+".encrypted"] = "needs an encryption key: start the node with SVC_ENCRYPTION_KEY"
		case f.Encrypted && f.Unique:
			d[key+".encrypted"] = "unique and encrypted cannot both be set (each sealed value differs)"
		}
		lower := strings.ToLower(f.Name)
		if seen[lower] {
			d[key+".name"] = "duplicate field name"
		}
		seen[lower] = true
		if c.Type == schema.TypeAuth && isAuthSystemName(f.Name) {
			d[key+".name"] = fmt.Sprintf("%q is a system field of auth collections", f.Name)
		}
		if f.Type == schema.FieldRelation && f.Collection == c.ID && c.ID == "" {
			d[key] = "relation target unresolved"
		}
	}
}
