package schema

import (
	"fmt"
	"regexp"
	"strings"
)

// cleanCharBounds validates min and max as character counts: whole,
// non-negative, min <= max, and max <= limit when limit > 0. Zero means no
// bound and is stored as absent.
func cleanCharBounds(o *Options, limit int) string {
	for _, b := range []struct {
		name string
		p    **float64
	}{{"min", &o.Min}, {"max", &o.Max}} {
		v := *b.p
		if v == nil {
			continue
		}
		if !whole(*v) || *v < 0 {
			return b.name + " must be a whole number of at least 0"
		}
		if limit > 0 && *v > float64(limit) {
			return fmt.Sprintf("%s cannot be more than %d", b.name, limit)
		}
		if *v == 0 {
			*b.p = nil
		}
	}
	if o.Min != nil && o.Max != nil && *o.Min > *o.Max {
		return "min cannot be greater than max"
	}
	return ""
}

// cleanValueBounds validates min and max as values: finite and min <= max.
// With wholeOnly both must be whole numbers (unix seconds).
func cleanValueBounds(o *Options, wholeOnly bool) string {
	for _, b := range []struct {
		name string
		v    *float64
	}{{"min", o.Min}, {"max", o.Max}} {
		if b.v == nil {
			continue
		}
		if !finite(*b.v) || wholeOnly && !whole(*b.v) {
			if wholeOnly {
				return b.name + " must be a whole number"
			}
			return b.name + " must be a finite number"
		}
	}
	if o.Min != nil && o.Max != nil && *o.Min > *o.Max {
		return "min cannot be greater than max"
	}
	return ""
}

// anchoredPattern compiles pattern so that it must match a whole value.
func anchoredPattern(pattern string) (*regexp.Regexp, error) {
	return regexp.Compile(`^(?:` + pattern + `)$`)
}

// domainName is what an entry of domains_only or domains_except may be.
var domainName = regexp.MustCompile(`^[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?$`)

// cleanDomains trims, lowercases and dedupes a domain list and checks that
// domains_only and domains_except are not both set.
func cleanDomains(o *Options) string {
	for _, l := range []struct {
		name string
		list *[]string
	}{{"domains_only", &o.DomainsOnly}, {"domains_except", &o.DomainsExcept}} {
		if len(*l.list) == 0 {
			*l.list = nil
			continue
		}
		out := make([]string, 0, len(*l.list))
		for _, d := range *l.list {
			d = strings.ToLower(strings.TrimSpace(d))
			if !domainName.MatchString(d) {
				return fmt.Sprintf("%s: %q is not a valid domain", l.name, d)
			}
			out = append(out, d)
		}
		*l.list = dedupe(out)
	}
	if len(o.DomainsOnly) > 0 && len(o.DomainsExcept) > 0 {
		return "domains_only and domains_except cannot both be set"
	}
	return ""
}

// checkDomain applies domains_only / domains_except to a lowercase domain.
func checkDomain(o *Options, domain string) string {
	if len(o.DomainsOnly) > 0 && !containsFold(o.DomainsOnly, domain) {
		return "domain " + domain + " is not allowed"
	}
	if containsFold(o.DomainsExcept, domain) {
		return "domain " + domain + " is not allowed"
	}
	return ""
}

// containsFold reports whether list holds s, ignoring case.
func containsFold(list []string, s string) bool {
	for _, e := range list {
		if strings.EqualFold(e, s) {
			return true
		}
	}
	return false
}

// cleanSearchEncrypted refuses a field that is both searchable and
// encrypted: the full-text index would hold the plaintext.
func cleanSearchEncrypted(o *Options) string {
	if o.Searchable && o.Encrypted {
		return "searchable and encrypted cannot both be set"
	}
	return ""
}

// cleanMaxSelect validates max_select and drops it on a single-value field.
func cleanMaxSelect(o *Options) string {
	if o.MaxSelect < 0 {
		return "max_select cannot be negative"
	}
	if !o.Multiple {
		o.MaxSelect = 0
	}
	return ""
}
