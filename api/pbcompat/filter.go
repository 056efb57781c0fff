package pbcompat

import (
	"net/http"
	"strings"

	"svcd/engine"
	"svcd/engine/schema"
	"svcd/internal/pbschema"
)

// A PocketBase client's filter and sort speak PocketBase's names; they go
// through the rewriter collections' rules go through on import
// (pbschema.RewriteRule): verified is email_verified on an auth
// collection and after @request.auth, @request.data is @request.body,
// @collection.<name> follows an alias. PocketBase's date strings
// ("2024-01-01 00:00:00.000Z") need no rewriting: svcd reads a string that
// meets a date field as a date.

// clientFilter rewrites a client's filter for collection c. A filter the
// rewriter refuses (tokenKey, an unterminated string) is PocketBase's 400
// invalid filter.
func (d *Deps) clientFilter(c *schema.Collection, filter string) (string, *Error) {
	if strings.TrimSpace(filter) == "" {
		return filter, nil
	}
	out, _, err := pbschema.RewriteRule(filter, pbschema.RuleContext{Where: "filter", Auth: c.Type == schema.TypeAuth, Lookup: collLookup{d}})
	if err != nil {
		return "", invalidFilter(err.Error())
	}
	return out, nil
}

// clientSort renames verified to email_verified in a sort of an auth
// collection (the other names are svcd's already).
func clientSort(c *schema.Collection, sort string) string {
	if c.Type != schema.TypeAuth {
		return sort
	}
	terms := strings.Split(sort, ",")
	for i, t := range terms {
		sign := ""
		if strings.HasPrefix(t, "-") || strings.HasPrefix(t, "+") {
			sign, t = t[:1], t[1:]
		}
		if t == "verified" {
			terms[i] = sign + "email_verified"
		}
	}
	return strings.Join(terms, ",")
}

// listQuery is ListQuery with the filter and sort in svcd's names.
func (d *Deps) listQuery(r *http.Request, c *schema.Collection) (engine.ListQuery, *Error) {
	lq := ListQuery(r)
	lq.Sort = clientSort(c, lq.Sort)
	f, e := d.clientFilter(c, lq.Filter)
	lq.Filter = f
	return lq, e
}

// invalidFilter is PocketBase's answer to a filter it cannot use.
func invalidFilter(problem string) *Error {
	return NewError(http.StatusBadRequest, "", map[string]any{
		"filter": FieldError{Code: "validation_invalid_filter", Message: sentenize(capitalize(problem))}})
}
