package engine

import (
	"errors"
	"fmt"
	"strings"

	"svcd/engine/filter"
	"svcd/engine/schema"
	"svcd/fsm"
)

// Rules are checked when a collection is saved: a rule that does not
// parse, or names a field, relation or collection the schema does not
// have, or an @request.auth member no auth collection has, is refused
// with the rule's name, the offset and the reason. The check compiles
// each rule exactly as a request would, against the schema the save
// leaves (savedSchema), so what it accepts is what runs.
//
// A rule can still break later, when something it names goes away in
// another collection (a field removed, a collection deleted): it then does
// not compile at request time and denies (SPEC.md: "an invalid rule
// denies"), and the admin view of its collection reports it
// (Schema.RuleErrors). Saving that collection again is not refused for a
// rule that was already broken and is sent unchanged, so the admin can
// change other things first; a new or edited rule must compile.

// savedSchema is the schema a save leaves: the current collections, with
// the ones being saved in their final form (a create, an update; one day a
// snapshot that saves several at once). It resolves filter references.
type savedSchema struct {
	set    *schemaSet
	saving []*Coll
}

// savingColl is the collection being saved that nameOrID names, or nil.
func (s savedSchema) savingColl(nameOrID string) *Coll {
	for _, ci := range s.saving {
		if ci.ID == nameOrID || strings.EqualFold(ci.Name, nameOrID) {
			return ci
		}
	}
	return nil
}

// FilterCollection implements filter.Resolver. A collection being saved
// is seen in its final form; its previous name no longer resolves.
func (s savedSchema) FilterCollection(nameOrID string) *filter.Collection {
	if ci := s.savingColl(nameOrID); ci != nil {
		return ci.filterColl()
	}
	ci := s.set.lookup(nameOrID)
	if ci == nil || s.savingColl(ci.ID) != nil {
		return nil
	}
	return ci.filterColl()
}

// authField reports whether an auth collection of the final schema has a
// field called name.
func (s savedSchema) authField(name string) bool {
	for _, ci := range s.saving {
		if hasAuthField(ci, name) {
			return true
		}
	}
	for _, ci := range s.set.list {
		if s.savingColl(ci.ID) == nil && hasAuthField(ci, name) {
			return true
		}
	}
	return false
}

// authField reports whether an auth collection of the set has a field
// called name (what @request.auth.<name> may read).
func (s *schemaSet) authField(name string) bool {
	for _, ci := range s.list {
		if hasAuthField(ci, name) {
			return true
		}
	}
	return false
}

func hasAuthField(ci *Coll, name string) bool {
	return ci.Type == schema.TypeAuth && ci.Collection.Field(name) != nil
}

// txAuthField answers authField inside the apply transaction, from the
// auth collections as of this log index (the same answer on every node).
// The collections are read once, on the first question.
func (e *Engine) txAuthField(tx *fsm.Tx) func(string) bool {
	var names map[string]bool
	return func(name string) bool {
		if names == nil {
			names = e.txAuthFieldNames(tx)
		}
		return names[name]
	}
}

func (e *Engine) txAuthFieldNames(tx *fsm.Tx) map[string]bool {
	names := map[string]bool{}
	type idVer struct {
		id  string
		ver int64
	}
	var auths []idVer
	rows, err := tx.Query(`SELECT id, version FROM _svc_collections WHERE type = 'auth' ORDER BY id`)
	if err != nil {
		return names // nothing known: a rule naming a custom field denies
	}
	for rows.Next() {
		var a idVer
		if rows.Scan(&a.id, &a.ver) == nil {
			auths = append(auths, a)
		}
	}
	rows.Close()
	for _, a := range auths {
		if ci := e.renderColl(tx, a.id, a.ver); ci != nil {
			for _, f := range ci.Fields {
				names[f.Name] = true
			}
		}
	}
	return names
}

// namedRule is one rule of a collection and the name details give it.
type namedRule struct {
	name string
	src  *string
}

// rulesOf lists the rules of c: the four record rules and the view rule
// of each file field (fields.N.viewRule).
func rulesOf(c *schema.Collection) []namedRule {
	out := []namedRule{
		{"view_rule", c.ViewRule}, {"create_rule", c.CreateRule},
		{"update_rule", c.UpdateRule}, {"delete_rule", c.DeleteRule},
	}
	for i, f := range c.Fields {
		if f.Type == schema.FieldFile {
			out = append(out, namedRule{fmt.Sprintf("fields.%d.viewRule", i), f.FileViewRule})
		}
	}
	return out
}

// ruleProblem says why rule src of ci does not compile against res (with
// authField telling the auth collections' fields), or "" when it does:
// "unknown field \"titel\" at offset 0".
func ruleProblem(ci *Coll, src *string, res filter.Resolver, authField func(string) bool) string {
	if src == nil || strings.TrimSpace(*src) == "" {
		return ""
	}
	expr, err := ci.parseRule(*src)
	if err == nil {
		_, err = filter.CompileSQL(expr, ci.filterColl(), res, &filter.Env{AllowHidden: true, AuthField: authField}, "_r")
	}
	return filterProblem(err)
}

// filterProblem is the reason a filter or rule was refused, as details
// and headers give it: the filter package's message without its
// "filter: " prefix ("expected a value, found '~' at offset 7"); "" for
// nil.
func filterProblem(err error) string {
	var se *filter.SyntaxError
	var ce *filter.CompileError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &se):
		return fmt.Sprintf("%s at offset %d", se.Msg, se.Pos)
	case errors.As(err, &ce) && ce.Pos >= 0:
		return fmt.Sprintf("%s at offset %d", ce.Msg, ce.Pos)
	case errors.As(err, &ce):
		return ce.Msg
	}
	return strings.TrimPrefix(err.Error(), "filter: ")
}

// ruleErrors checks every rule of ci against res: rule name → reason, nil
// when all compile.
func ruleErrors(ci *Coll, res filter.Resolver, authField func(string) bool) map[string]string {
	var out map[string]string
	for _, r := range rulesOf(ci.Collection) {
		if msg := ruleProblem(ci, r.src, res, authField); msg != "" {
			if out == nil {
				out = map[string]string{}
			}
			out[r.name] = msg
		}
	}
	return out
}

// checkRules refuses the rules of c, about to be saved (viewCols for a
// view), that do not compile against the schema the save leaves. old is
// the current version for an update: its rules that are already broken
// and sent unchanged are let through (see above).
func (sc *Schema) checkRules(c *schema.Collection, viewCols []string, old *Coll) *Error {
	return sc.checkRulesIn(c, viewCols, old, nil)
}

// checkRulesIn is checkRules with the collections a schema plan saves
// before c, seen in their final form.
func (sc *Schema) checkRulesIn(c *schema.Collection, viewCols []string, old *Coll, pending []*Coll) *Error {
	ci, err := newCollInfo(c, viewCols)
	if err != nil {
		return Errorf(KindInternal, "check rules: %v", err)
	}
	set := sc.e.schema.Load()
	saved := savedSchema{set: set, saving: append([]*Coll{ci}, pending...)}
	var was map[string]string
	if old != nil {
		was = ruleErrors(old, set, set.authField)
	}
	d := map[string]string{}
	for _, r := range rulesOf(c) {
		msg := ruleProblem(ci, r.src, saved, saved.authField)
		if msg == "" {
			continue
		}
		if old != nil && was[r.name] != "" && sameRule(r.src, ruleNamed(old.Collection, r.name)) {
			continue // broken before this save, and not touched by it
		}
		d[r.name] = msg
	}
	if len(d) > 0 {
		return ValidationError(d)
	}
	return nil
}

// ruleNamed is the rule of c that rulesOf calls name, or nil.
func ruleNamed(c *schema.Collection, name string) *string {
	for _, r := range rulesOf(c) {
		if r.name == name {
			return r.src
		}
	}
	return nil
}

func sameRule(a, b *string) bool { return a != nil && b != nil && *a == *b }

// RuleErrors reports the rules of c that do not compile against the
// current schema (rule name → reason; nil when every rule compiles): the
// admin view's rule_errors. Such a rule denies every non-admin caller.
func (sc *Schema) RuleErrors(c *schema.Collection) map[string]string {
	set := sc.e.schema.Load()
	ci := set.lookup(c.ID)
	if ci == nil {
		return nil
	}
	return ruleErrors(ci, set, set.authField)
}
