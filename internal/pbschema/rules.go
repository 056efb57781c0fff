package pbschema

import (
	"errors"
	"fmt"
	"strings"
)

// RuleContext is what rewriting a rule or filter needs to know about the
// collection it belongs to.
type RuleContext struct {
	// Where names the rule in problems ("listRule", "filter", ...).
	Where string
	// Auth is true for an auth collection, where PocketBase's "verified"
	// is svcd's "email_verified".
	Auth bool
	// Lookup maps @collection.<name> to renamed collections (may be nil).
	Lookup Lookup
}

// RewriteRule rewrites a PocketBase rule or filter into svcd's filter
// language, token by token (strings, numbers and operators are kept as
// they are; both languages share the operators, the ?-forms, the
// modifiers :each :length :lower :isset :changed, the datetime macros,
// geoDistance and strftime). Identifiers are rewritten:
//
//   - @request.data.* (before PocketBase 0.23) becomes @request.body.*;
//   - verified becomes email_verified on auth collections and after
//     @request.auth;
//   - @collection.<name> follows a renamed collection.
//
// PocketBase date strings ("2006-01-02 15:04:05.000Z") are kept: svcd
// reads a string constant that meets a date field as a date, dropping the
// milliseconds. A rule svcd cannot express (tokenKey) is an error: the
// caller stores null (superusers only), failing closed. Problems list the
// rewrites that may change the meaning. The empty rule stays empty.
func RewriteRule(rule string, rc RuleContext) (string, []Problem, error) {
	var out strings.Builder
	var problems []Problem
	for i := 0; i < len(rule); {
		c := rule[i]
		switch {
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(rule) && rule[j] != c {
				if rule[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(rule) {
				return "", problems, fmt.Errorf("%s: unterminated string at offset %d", rc.Where, i)
			}
			out.WriteString(rule[i : j+1])
			i = j + 1
		case c == '/' && i+1 < len(rule) && rule[i+1] == '/':
			// PocketBase allows // comments to the end of the line.
			j := strings.IndexByte(rule[i:], '\n')
			if j < 0 {
				j = len(rule) - i
			}
			i += j
			problems = append(problems, Problem{Where: rc.Where, Message: "a // comment was removed"})
		case isIdentByte(c) && !(c >= '0' && c <= '9'):
			j := i
			for j < len(rule) && (isIdentByte(rule[j]) || rule[j] == '.' || rule[j] == ':') {
				j++
			}
			id, ps, err := rewriteIdent(rule[i:j], rc)
			problems = append(problems, ps...)
			if err != nil {
				return "", problems, err
			}
			out.WriteString(id)
			i = j
		case c >= '0' && c <= '9':
			j := i
			for j < len(rule) && (isIdentByte(rule[j]) || rule[j] == '.') {
				j++
			}
			out.WriteString(rule[i:j])
			i = j
		default:
			out.WriteByte(c)
			i++
		}
	}
	return out.String(), problems, nil
}

func isIdentByte(c byte) bool {
	return c == '_' || c == '@' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// errTokenKey is the rule svcd cannot express: it has no tokenKey.
var errTokenKey = errors.New("tokenKey does not exist in svcd (sessions are revoked by id)")

// rewriteIdent rewrites one identifier path such as
// @request.auth.verified, @collection.posts:p.author or tags:length.
func rewriteIdent(id string, rc RuleContext) (string, []Problem, error) {
	segs := strings.Split(id, ".")
	var problems []Problem
	// A trailing :modifier stays on the last segment.
	last := len(segs) - 1
	mod := ""
	if k := strings.IndexByte(segs[last], ':'); k >= 0 && !(segs[0] == "@collection" && last == 1) {
		segs[last], mod = segs[last][:k], segs[last][k:]
	}
	for _, s := range segs {
		if strings.EqualFold(s, "tokenKey") {
			return "", nil, fmt.Errorf("%s: %w", rc.Where, errTokenKey)
		}
	}
	first := 0 // index of the first segment naming a field of a collection
	authPath := false
	switch {
	case segs[0] == "@request" && len(segs) > 1 && segs[1] == "data":
		segs[1] = "body"
		problems = append(problems, Problem{Where: rc.Where, Original: id, Message: "@request.data (PocketBase before 0.23) became @request.body"})
		first = len(segs)
	case segs[0] == "@request" && len(segs) > 2 && segs[1] == "auth":
		first, authPath = 2, true
	case segs[0] == "@request":
		first = len(segs)
	case segs[0] == "@collection" && len(segs) > 1:
		name, alias, _ := strings.Cut(segs[1], ":")
		if rc.Lookup != nil {
			if n, ok := rc.Lookup.SvcdName(name); ok && n != name {
				problems = append(problems, Problem{Where: rc.Where, Original: id, Message: fmt.Sprintf("@collection.%s became @collection.%s (renamed collection)", name, n)})
				name = n
			}
		}
		if alias != "" {
			segs[1] = name + ":" + alias
		} else {
			segs[1] = name
		}
		first = len(segs) // the target's type is unknown here
	case strings.HasPrefix(segs[0], "@"):
		first = len(segs) // macros (@now, ...)
	default:
		authPath = rc.Auth
	}
	if first < len(segs) && authPath && segs[first] == "verified" {
		segs[first] = "email_verified"
	}
	for i := first + 1; i < len(segs); i++ {
		if segs[i] == "verified" {
			problems = append(problems, Problem{Where: rc.Where, Original: id, Message: "kept \"verified\" in a relation path: if it reaches an auth collection, svcd names it email_verified"})
		}
	}
	return strings.Join(segs, ".") + mod, problems, nil
}

// ViewRule combines PocketBase's listRule and viewRule into svcd's one
// view_rule: equal rules stay; two different rules become their AND
// (reported: lists or single reads may now hide records PocketBase
// showed); a null one makes the result null (superusers only, reported
// when the other was not null).
func ViewRule(list, view *string) (*string, []Problem) {
	switch {
	case list == nil && view == nil:
		return nil, nil
	case list == nil || view == nil:
		other := list
		if other == nil {
			other = view
		}
		return nil, []Problem{{Where: "listRule/viewRule", Original: *other, Message: "one of listRule and viewRule is null (superusers only), so view_rule is null"}}
	case *list == *view:
		r := *list
		return &r, nil
	case *list == "":
		r := *view
		return &r, []Problem{{Where: "listRule/viewRule", Original: "listRule=\"\" viewRule=" + *view, Message: "listRule is public but viewRule is not: view_rule is the viewRule, lists apply it too"}}
	case *view == "":
		r := *list
		return &r, []Problem{{Where: "listRule/viewRule", Original: "listRule=" + *list + " viewRule=\"\"", Message: "viewRule is public but listRule is not: view_rule is the listRule, single reads apply it too"}}
	}
	r := "(" + *list + ") && (" + *view + ")"
	return &r, []Problem{{Where: "listRule/viewRule", Original: "listRule=" + *list + " viewRule=" + *view, Message: "listRule and viewRule differ: view_rule is their AND"}}
}
