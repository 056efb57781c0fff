package pbschema

import (
	"fmt"
	"regexp"
	"strings"
)

// indexSQL matches the CREATE INDEX statements PocketBase stores:
// CREATE [UNIQUE] INDEX [IF NOT EXISTS] `name` ON `table` (columns) [WHERE ...].
var indexSQL = regexp.MustCompile("(?is)^\\s*CREATE\\s+(UNIQUE\\s+)?INDEX\\s+(?:IF\\s+NOT\\s+EXISTS\\s+)?[`\"\\[]?([^`\"\\]\\s]+)[`\"\\]]?\\s+ON\\s+[`\"\\[]?[^`\"\\]\\s(]+[`\"\\]]?\\s*\\((.*)\\)\\s*(WHERE\\s+.*)?;?\\s*$")

// indexColumn is one plain indexed column with optional COLLATE and order.
var indexColumn = regexp.MustCompile("(?i)^\\s*[`\"\\[]?([A-Za-z_][A-Za-z0-9_]*)[`\"\\]]?(\\s+COLLATE\\s+\\w+)?(\\s+(ASC|DESC))?\\s*$")

// ParsedIndex is one PocketBase index statement taken apart.
type ParsedIndex struct {
	Name    string
	Unique  bool
	Columns []string // plain column names; nil when an expression is indexed
	Where   string
	Collate bool
}

// ParseIndex takes a PocketBase index statement apart.
func ParseIndex(sql string) (ParsedIndex, error) {
	m := indexSQL.FindStringSubmatch(sql)
	if m == nil {
		return ParsedIndex{}, fmt.Errorf("not a CREATE INDEX statement")
	}
	p := ParsedIndex{Name: m[2], Unique: m[1] != "", Where: strings.TrimSpace(m[4])}
	for _, col := range strings.Split(m[3], ",") {
		cm := indexColumn.FindStringSubmatch(col)
		if cm == nil {
			return p, nil // an expression: Columns stays nil
		}
		p.Columns = append(p.Columns, cm[1])
		p.Collate = p.Collate || cm[2] != ""
	}
	return p, nil
}

// translateIndexes turns PocketBase's index statements into svcd indexes
// on single fields; renames maps PocketBase field names to svcd's. What
// svcd cannot index (several columns, expressions, WHERE) is reported.
func translateIndexes(stmts []string, renames map[string]string, auth bool) ([]Index, []Problem) {
	var out []Index
	var problems []Problem
	for i, s := range stmts {
		where := fmt.Sprintf("indexes[%d]", i)
		p, err := ParseIndex(s)
		switch {
		case err != nil:
			problems = append(problems, Problem{Where: where, Original: s, Message: "not understood; not created"})
			continue
		case p.Columns == nil:
			problems = append(problems, Problem{Where: where, Original: s, Message: "an index on an expression is not supported; not created"})
			continue
		case len(p.Columns) == 1 && skipIndexColumn(p.Columns[0], auth):
			continue // built in: id, created, updated; auth email (svcd indexes it) and tokenKey (gone)
		case len(p.Columns) > 1:
			problems = append(problems, Problem{Where: where, Original: s, Message: "svcd indexes one field; this composite index was not created"})
			continue
		case p.Where != "":
			problems = append(problems, Problem{Where: where, Original: s, Message: "partial indexes (WHERE) are not supported; not created"})
			continue
		}
		col := p.Columns[0]
		name, ok := renames[col]
		if !ok {
			problems = append(problems, Problem{Where: where, Original: s, Message: fmt.Sprintf("no field %q; not created", col)})
			continue
		}
		if p.Collate {
			problems = append(problems, Problem{Where: where, Original: s, Message: "COLLATE is dropped: svcd's unique check is case-sensitive"})
		}
		out = append(out, Index{Field: name, Unique: p.Unique})
	}
	return out, problems
}

// skipIndexColumn reports a column svcd indexes itself or no longer has.
func skipIndexColumn(col string, auth bool) bool {
	if auth && (strings.EqualFold(col, "email") || strings.EqualFold(col, "tokenKey")) {
		return true
	}
	return strings.EqualFold(col, "id") || strings.EqualFold(col, "created") || strings.EqualFold(col, "updated")
}
