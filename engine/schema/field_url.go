package schema

import (
	"net/url"
	"strings"
)

var _ FieldType = urlType{}

// urlType is an absolute http or https URL with a host. The input is
// trimmed and otherwise kept as given; "" is kept as "". Stored as TEXT.
type urlType struct{}

func (urlType) Name() string { return FieldURL }

func (urlType) Column(*Field) Column { return ColText }

func (urlType) OptionKeys() []string {
	return []string{"domains_only", "domains_except", "searchable", "encrypted"}
}

func (urlType) CleanOptions(f *Field, _ Lookup) string {
	o := f.Options
	f.Options = Options{
		DomainsOnly:   o.DomainsOnly,
		DomainsExcept: o.DomainsExcept,
		Searchable:    o.Searchable,
		Encrypted:     o.Encrypted,
	}
	if msg := cleanDomains(&f.Options); msg != "" {
		return msg
	}
	return cleanSearchEncrypted(&f.Options)
}

func (urlType) Normalize(f *Field, in any) (any, string) {
	if in == nil {
		return nil, ""
	}
	s, ok := in.(string)
	if !ok {
		return nil, "must be a string"
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return "", ""
	}
	if strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return nil, "must be a valid URL"
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") ||
		u.Opaque != "" || u.Hostname() == "" {
		return nil, "must be a valid http or https URL"
	}
	if msg := checkDomain(&f.Options, strings.ToLower(u.Hostname())); msg != "" {
		return nil, msg
	}
	return s, ""
}

func (urlType) IsZero(_ *Field, stored any) bool { return isZeroText(stored) }

func (urlType) AppendJSON(buf []byte, _ *Field, stored any) []byte {
	return appendStoredText(buf, stored)
}
