package flags

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"svcd/engine"
)

// Limits of a flag (docs/flags.md "Limits").
const (
	maxVariations    = 100
	maxRules         = 100
	maxPrerequisites = 20
)

// defaultSticky is the attribute a rollout buckets by when it names none.
const defaultSticky = "id"

// parseFlag reads and checks a flag definition (the body of
// POST /admin/flags, a merged PATCH, or a stored definition with its key
// added), filling in what may be left out: type bool; for a bool flag,
// variations on (true) and off (false); the type's zero as the default
// value; rule ids r1, r2, ...; enabled. Everything it finds wrong is one
// 422 with a message per path.
func parseFlag(raw []byte) (*Flag, error) {
	obj, err := decodeObject(raw)
	if err != nil {
		return nil, err
	}
	p := problems{}
	f := &Flag{}
	for k := range obj {
		switch k {
		case "key", "type", "default_value", "variations", "rules", "enabled", "created", "updated":
		default:
			p.add(k, "unknown member")
		}
	}
	if err := json.Unmarshal(obj["key"], &f.Key); err != nil {
		p.add("key", "is required: the flag's key")
	} else if msg := nameProblem(f.Key); msg != "" {
		p.add("key", "%s", msg)
	}
	f.Type = TypeBool
	typed := true
	if r, ok := obj["type"]; ok {
		if json.Unmarshal(r, &f.Type) != nil || !knownType(f.Type) {
			p.add("type", "must be one of bool, string, number, json")
			typed = false
		}
	}
	f.Variations = parseVariations(obj["variations"], f.Type, typed, p)
	f.DefaultValue = zeroValue(f.Type)
	if r, ok := obj["default_value"]; ok {
		canon, v, err := canonical(r)
		switch {
		case err != nil:
			p.add("default_value", "is not a JSON value: %v", err)
		case typed && typeProblem(f.Type, v) != "":
			p.add("default_value", "%s", typeProblem(f.Type, v))
		default:
			f.DefaultValue = canon
		}
	}
	f.Rules = parseRules(obj["rules"], f, p)
	f.Enabled = true
	if r, ok := obj["enabled"]; ok && json.Unmarshal(r, &f.Enabled) != nil {
		p.add("enabled", "must be true or false")
	}
	if err := p.err(); err != nil {
		return nil, err
	}
	return f, nil
}

// decodeObject reads a JSON object's members (400 for what is not JSON or
// not an object).
func decodeObject(raw []byte) (map[string]json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, engine.Errorf(engine.KindBadRequest, "The body must be a JSON object")
	}
	return obj, nil
}

func knownType(t string) bool {
	return t == TypeBool || t == TypeString || t == TypeNumber || t == TypeJSON
}

// typeProblem says why v is not a value of flag type t, or "".
func typeProblem(t string, v any) string {
	ok := true
	switch t {
	case TypeBool:
		_, ok = v.(bool)
	case TypeString:
		_, ok = v.(string)
	case TypeNumber:
		_, ok = v.(float64)
	}
	if ok {
		return ""
	}
	return fmt.Sprintf("must be a %s (the flag's type)", map[string]string{TypeBool: "boolean", TypeString: "string", TypeNumber: "number"}[t])
}

// zeroValue is the default value of a flag of type t that names none.
func zeroValue(t string) json.RawMessage {
	switch t {
	case TypeBool:
		return json.RawMessage(`false`)
	case TypeString:
		return json.RawMessage(`""`)
	case TypeNumber:
		return json.RawMessage(`0`)
	}
	return json.RawMessage(`null`)
}

// parseVariations reads the variations; a bool flag without any gets on
// and off.
func parseVariations(raw json.RawMessage, typ string, typed bool, p problems) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	if raw == nil || string(raw) == "null" {
		if typ == TypeBool {
			out["on"], out["off"] = json.RawMessage(`true`), json.RawMessage(`false`)
		}
		return out
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		p.add("variations", "must be an object of variation names to values")
		return out
	}
	if len(m) > maxVariations {
		p.add("variations", "holds more than %d variations", maxVariations)
		return out
	}
	for name, r := range m {
		path := "variations." + name
		if msg := nameProblem(name); msg != "" {
			p.add(path, "the variation name %s", msg)
			continue
		}
		canon, v, err := canonical(r)
		if err != nil {
			p.add(path, "is not a JSON value: %v", err)
			continue
		}
		if typed {
			if msg := typeProblem(typ, v); msg != "" {
				p.add(path, "%s", msg)
				continue
			}
		}
		out[name] = canon
	}
	return out
}

// parseRules reads the rules of f (its variations known), then names the
// rules that have no id.
func parseRules(raw json.RawMessage, f *Flag, p problems) []Rule {
	rules := []Rule{}
	if raw == nil || string(raw) == "null" {
		return rules
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		p.add("rules", "must be an array of rules")
		return rules
	}
	if len(list) > maxRules {
		p.add("rules", "holds more than %d rules", maxRules)
		return rules
	}
	cp := &condParser{p: p}
	ids := map[string]bool{}
	for i, r := range list {
		path := indexPath("rules", i)
		rule := parseRule(r, path, f, cp)
		if rule.ID != "" {
			if ids[rule.ID] {
				p.add(path+".id", "another rule has the id %q", rule.ID)
			}
			ids[rule.ID] = true
		}
		rules = append(rules, rule)
	}
	next := 1
	for i := range rules {
		for rules[i].ID == "" {
			if id := "r" + strconv.Itoa(next); !ids[id] {
				rules[i].ID, ids[id] = id, true
			}
			next++
		}
	}
	return rules
}

// parseRule reads one rule at path.
func parseRule(raw json.RawMessage, path string, f *Flag, cp *condParser) Rule {
	p := cp.p
	var rule Rule
	obj := map[string]json.RawMessage{}
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		p.add(path, "must be a rule: {id?, when?, rollout?, prerequisites?, variation}")
		return rule
	}
	for k := range obj {
		switch k {
		case "id", "when", "rollout", "prerequisites", "variation":
		default:
			p.add(path+"."+k, "unknown member")
		}
	}
	if r, ok := obj["id"]; ok && string(r) != "null" {
		if json.Unmarshal(r, &rule.ID) != nil {
			p.add(path+".id", "must be a string")
		} else if msg := nameProblem(rule.ID); msg != "" {
			p.add(path+".id", "%s", msg)
		}
	}
	if r, ok := obj["when"]; ok && string(r) != "null" {
		rule.When = cp.parse(r, path+".when", 1)
	}
	if r, ok := obj["rollout"]; ok && string(r) != "null" {
		rule.Rollout = parseRollout(r, path+".rollout", p)
	}
	if r, ok := obj["prerequisites"]; ok && string(r) != "null" {
		rule.Prerequisites = parsePrerequisites(r, path+".prerequisites", f.Key, p)
	}
	if json.Unmarshal(obj["variation"], &rule.Variation) != nil || rule.Variation == "" {
		p.add(path+".variation", "is required: the name of the variation the rule serves")
	} else if _, ok := f.Variations[rule.Variation]; !ok {
		p.add(path+".variation", "no variation %q: the flag's variations are %s", rule.Variation, names(f.Variations))
	}
	return rule
}

// parseRollout reads {value, sticky}.
func parseRollout(raw json.RawMessage, path string, p problems) *Rollout {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		p.add(path, "must be {value: percent, sticky: attribute}")
		return nil
	}
	for k := range obj {
		if k != "value" && k != "sticky" {
			p.add(path+"."+k, "unknown member")
		}
	}
	ro := &Rollout{Sticky: defaultSticky}
	if json.Unmarshal(obj["value"], &ro.Value) != nil || math.IsNaN(ro.Value) || ro.Value < 0 || ro.Value > 100 {
		p.add(path+".value", "must be a percentage from 0 to 100")
	}
	if r, ok := obj["sticky"]; ok && string(r) != "null" {
		if json.Unmarshal(r, &ro.Sticky) != nil || ro.Sticky == "" || len(ro.Sticky) > maxAttrBytes {
			p.add(path+".sticky", "must be the name of a context attribute")
		}
	}
	return ro
}

// parsePrerequisites reads [{key, variation}] of the flag key self.
func parsePrerequisites(raw json.RawMessage, path, self string, p problems) []Prerequisite {
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		p.add(path, "must be an array of {key, variation}")
		return nil
	}
	if len(list) > maxPrerequisites {
		p.add(path, "holds more than %d prerequisites", maxPrerequisites)
		return nil
	}
	out := make([]Prerequisite, 0, len(list))
	for i, r := range list {
		at := indexPath(path, i)
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(r, &obj); err != nil || obj == nil {
			p.add(at, "must be {key, variation}")
			continue
		}
		for k := range obj {
			if k != "key" && k != "variation" {
				p.add(at+"."+k, "unknown member")
			}
		}
		var pr Prerequisite
		if json.Unmarshal(obj["key"], &pr.Key) != nil {
			p.add(at+".key", "is required: the key of another flag")
		} else if msg := nameProblem(pr.Key); msg != "" {
			p.add(at+".key", "%s", msg)
		} else if pr.Key == self {
			p.add(at+".key", "a flag cannot be its own prerequisite")
		}
		if json.Unmarshal(obj["variation"], &pr.Variation) != nil {
			p.add(at+".variation", "is required: a variation of flag %q", pr.Key)
		} else if msg := nameProblem(pr.Variation); msg != "" {
			p.add(at+".variation", "%s", msg)
		}
		out = append(out, pr)
	}
	return out
}

// names lists a variation map's names, sorted ("none" when empty).
func names(m map[string]json.RawMessage) string {
	if len(m) == 0 {
		return "none"
	}
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// mergeFlag is the definition current becomes with the members of patch
// (a PATCH body): each member given replaces the current one.
func mergeFlag(current *Flag, patch []byte) ([]byte, error) {
	obj, err := decodeObject(patch)
	if err != nil {
		return nil, err
	}
	if r, ok := obj["key"]; ok {
		var k string
		if json.Unmarshal(r, &k) != nil || k != current.Key {
			return nil, engine.FieldError("key", "cannot be changed: create a flag under the new key and delete this one")
		}
	}
	base, err := marshalCanonical(current)
	if err != nil {
		return nil, err
	}
	merged := map[string]json.RawMessage{}
	if err := json.Unmarshal(base, &merged); err != nil {
		return nil, err
	}
	for k, v := range obj {
		merged[k] = v
	}
	return json.Marshal(merged)
}
