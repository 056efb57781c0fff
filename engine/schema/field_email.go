package schema

import (
	"net/mail"
	"strings"
)

var _ FieldType = emailType{}

// maxEmailLength is the longest address accepted (RFC 5321 path limit).
const maxEmailLength = 254

// emailType is one email address without a display name. The input is
// trimmed and its domain lowercased; "" is kept as "". Stored as TEXT.
type emailType struct{}

func (emailType) Name() string { return FieldEmail }

func (emailType) Column(*Field) Column { return ColText }

func (emailType) OptionKeys() []string {
	return []string{"domains_only", "domains_except", "searchable", "encrypted"}
}

func (emailType) CleanOptions(f *Field, _ Lookup) string {
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

func (emailType) Normalize(f *Field, in any) (any, string) {
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
	if len(s) > maxEmailLength {
		return nil, "must be a valid email address"
	}
	addr, err := mail.ParseAddress(s)
	if err != nil || addr.Name != "" || addr.Address != s {
		return nil, "must be a valid email address"
	}
	at := strings.LastIndexByte(s, '@')
	domain := strings.ToLower(s[at+1:])
	if msg := checkDomain(&f.Options, domain); msg != "" {
		return nil, msg
	}
	return s[:at+1] + domain, ""
}

func (emailType) IsZero(_ *Field, stored any) bool { return isZeroText(stored) }

func (emailType) AppendJSON(buf []byte, _ *Field, stored any) []byte {
	return appendStoredText(buf, stored)
}
