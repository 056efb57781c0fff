package pbcompat

import (
	"net/http"
	"strconv"
	"strings"

	"svcd/engine"
)

// PocketBase's page sizes (pb:tools/search/provider.go): 30 by default,
// at most 1000 (svcd serves at most engine.MaxPerPage of them; the answer
// names the size used).
const (
	DefaultPerPage = 30
	MaxPerPage     = 1000
)

// ListQuery reads PocketBase's list parameters (page, perPage, sort,
// filter, expand, fields, skipTotal) into svcd's. PocketBase's defaults
// apply: without sort, the oldest first (PocketBase's rowid order);
// @rowid sorts by created; @random is dropped (svcd has no random order);
// fields "*" is every field.
func ListQuery(r *http.Request) engine.ListQuery {
	q := r.URL.Query()
	lq := engine.ListQuery{
		Page:    atoiOr(q.Get("page"), 1),
		PerPage: atoiOr(q.Get("perPage"), DefaultPerPage),
		Sort:    pbSort(q.Get("sort")),
		Fields:  Fields(q.Get("fields")),
		Filter:  q.Get("filter"),
		Expand:  q.Get("expand"),
	}
	switch strings.ToLower(q.Get("skipTotal")) {
	case "1", "true", "t", "yes":
		lq.SkipTotal = true
	}
	if lq.Page < 1 {
		lq.Page = 1
	}
	if lq.PerPage < 1 {
		lq.PerPage = DefaultPerPage
	}
	lq.PerPage = min(lq.PerPage, MaxPerPage, engine.MaxPerPage)
	return lq
}

func atoiOr(s string, def int) int {
	if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil {
		return n
	}
	return def
}

// pbSort translates PocketBase's sort into svcd's.
func pbSort(s string) string {
	if strings.TrimSpace(s) == "" {
		return "created,id"
	}
	var out []string
	for _, term := range strings.Split(s, ",") {
		term = strings.TrimSpace(term)
		desc := strings.HasPrefix(term, "-")
		name := strings.TrimLeft(term, "+-")
		switch name {
		case "":
			continue
		case "@random":
			continue
		case "@rowid":
			name = "created"
		}
		if desc {
			name = "-" + name
		}
		out = append(out, name)
	}
	if len(out) == 0 {
		return "created,id"
	}
	return strings.Join(out, ",")
}

// Fields translates PocketBase's fields parameter: "*" (alone or as a
// segment) is every field, and modifiers (:excerpt(...)) are left to the
// layer (excerpt.go), which applies them to the answer.
func Fields(s string) string {
	if strings.TrimSpace(s) == "" {
		return ""
	}
	var out []string
	for _, f := range splitFields(s) {
		f = strings.TrimSpace(f)
		if i := strings.Index(f, ":"); i >= 0 {
			f = f[:i]
		}
		if f == "*" {
			return ""
		}
		if f != "" {
			out = append(out, f)
		}
	}
	return strings.Join(out, ",")
}

// splitFields splits on commas outside parentheses (excerpt arguments
// hold commas).
func splitFields(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// List is PocketBase's page of records (pb:tools/search/provider.go
// Result).
type List struct {
	Items      []map[string]any `json:"items"`
	Page       int              `json:"page"`
	PerPage    int              `json:"perPage"`
	TotalItems int              `json:"totalItems"`
	TotalPages int              `json:"totalPages"`
}
