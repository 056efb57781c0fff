package logfile

import (
	"github.com/theory/jsonpath"
)

// Search semantics: the log is read as a JSON array of its lines, and a
// JSONPath query (RFC 9535, github.com/theory/jsonpath) is applied to
// each line as the array [line]. A line matches when the query selects
// at least one node from it. So `$[?@.status >= 500]` keeps the lines
// whose status is 500 or more, `$[?@.principal.type == "admin"]` the
// admins' requests, and `$[*].request_id` every line that has a request
// id; `$.status` selects nothing (the root is the array).

// Compile parses a JSONPath query into a line matcher (Query.Match); a
// malformed query is an error that says where.
func Compile(query string) (func(v any) bool, error) {
	p, err := jsonpath.Parse(query)
	if err != nil {
		return nil, err
	}
	return func(v any) bool { return len(p.Select([]any{v})) > 0 }, nil
}
