package schema

import (
	"strings"
	"testing"
)

func TestEmailNormalize(t *testing.T) {
	only := Field{Options: Options{DomainsOnly: []string{"example.com"}}}
	except := Field{Options: Options{DomainsExcept: []string{"spam.com"}}}
	runNormalize(t, FieldEmail, []normCase{
		{name: "nil", in: nil, want: nil},
		{name: "empty", in: "", want: ""},
		{name: "blank trimmed", in: "   ", want: ""},
		{name: "plain", in: "a@example.com", want: "a@example.com"},
		{name: "plus", in: "a.b+tag@sub.example.co", want: "a.b+tag@sub.example.co"},
		{name: "trimmed and domain lowered", in: " Ab@Example.COM ", want: "Ab@example.com"},
		{name: "no dot domain", in: "root@localhost", want: "root@localhost"},
		{name: "display name", in: "John <a@example.com>", msg: "must be a valid email address"},
		{name: "angle brackets", in: "<a@example.com>", msg: "must be a valid email address"},
		{name: "comment", in: "a@example.com (x)", msg: "must be a valid email address"},
		{name: "two addresses", in: "a@b.com, c@d.com", msg: "must be a valid email address"},
		{name: "no at", in: "abc", msg: "must be a valid email address"},
		{name: "no domain", in: "a@", msg: "must be a valid email address"},
		{name: "no local", in: "@example.com", msg: "must be a valid email address"},
		{name: "space inside", in: "a b@example.com", msg: "must be a valid email address"},
		{name: "too long", in: strings.Repeat("a", 250) + "@b.co", msg: "must be a valid email address"},
		{name: "number", in: num("1"), msg: "must be a string"},
		{name: "array", in: []any{"a@b.com"}, msg: "must be a string"},
		{name: "only ok", f: only, in: "x@EXAMPLE.com", want: "x@example.com"},
		{name: "only other", f: only, in: "x@other.com", msg: "domain other.com is not allowed"},
		{name: "only subdomain", f: only, in: "x@sub.example.com", msg: "not allowed"},
		{name: "except hit", f: except, in: "x@SPAM.com", msg: "domain spam.com is not allowed"},
		{name: "except subdomain ok", f: except, in: "x@sub.spam.com", want: "x@sub.spam.com"},
		{name: "except other ok", f: except, in: "x@ok.com", want: "x@ok.com"},
	})
}

func TestEmailURLCleanOptions(t *testing.T) {
	for _, typ := range []string{FieldEmail, FieldURL} {
		t.Run(typ, func(t *testing.T) {
			runClean(t, typ, []optCase{
				{name: "none", want: Options{}},
				{name: "only normalized", opts: Options{DomainsOnly: []string{" Example.COM ", "example.com", "b.io"}},
					want: Options{DomainsOnly: []string{"example.com", "b.io"}}},
				{name: "except", opts: Options{DomainsExcept: []string{"spam.com"}}, want: Options{DomainsExcept: []string{"spam.com"}}},
				{name: "empty list dropped", opts: Options{DomainsOnly: []string{}}, want: Options{}},
				{name: "both", opts: Options{DomainsOnly: []string{"a.com"}, DomainsExcept: []string{"b.com"}}, msg: "domains_only and domains_except cannot both be set"},
				{name: "bad domain", opts: Options{DomainsOnly: []string{"a b.com"}}, msg: "not a valid domain"},
				{name: "empty domain", opts: Options{DomainsExcept: []string{""}}, msg: "not a valid domain"},
				{name: "at in domain", opts: Options{DomainsOnly: []string{"x@a.com"}}, msg: "not a valid domain"},
				{name: "searchable", opts: Options{Searchable: true}, want: Options{Searchable: true}},
				{name: "encrypted", opts: Options{Encrypted: true}, want: Options{Encrypted: true}},
				{name: "searchable and encrypted", opts: Options{Searchable: true, Encrypted: true}, msg: "cannot both be set"},
				{name: "others dropped", opts: allOptions(), want: Options{DomainsOnly: []string{"example.com"}, Searchable: true}},
			})
		})
	}
}

func TestURLNormalize(t *testing.T) {
	only := Field{Options: Options{DomainsOnly: []string{"example.com"}}}
	except := Field{Options: Options{DomainsExcept: []string{"evil.com"}}}
	runNormalize(t, FieldURL, []normCase{
		{name: "nil", in: nil, want: nil},
		{name: "empty", in: "", want: ""},
		{name: "https", in: "https://example.com", want: "https://example.com"},
		{name: "full", in: "http://u:p@example.com:8080/a/b?q=1&r=2#frag", want: "http://u:p@example.com:8080/a/b?q=1&r=2#frag"},
		{name: "trimmed", in: "  https://x.io/  ", want: "https://x.io/"},
		{name: "upper scheme kept", in: "HTTPS://Example.com", want: "HTTPS://Example.com"},
		{name: "ipv6", in: "http://[::1]:80/", want: "http://[::1]:80/"},
		{name: "ftp", in: "ftp://example.com", msg: "must be a valid http or https URL"},
		{name: "javascript", in: "javascript:alert(1)", msg: "must be a valid http or https URL"},
		{name: "no scheme", in: "example.com", msg: "must be a valid http or https URL"},
		{name: "protocol relative", in: "//example.com", msg: "must be a valid http or https URL"},
		{name: "no host", in: "https://", msg: "must be a valid http or https URL"},
		{name: "opaque", in: "http:foo", msg: "must be a valid http or https URL"},
		{name: "port only", in: "http://:80", msg: "must be a valid http or https URL"},
		{name: "space", in: "https://exa mple.com", msg: "must be a valid URL"},
		{name: "control", in: "https://example.com/\x00", msg: "must be a valid URL"},
		{name: "number", in: 1.0, msg: "must be a string"},
		{name: "only ok", f: only, in: "https://EXAMPLE.com:8443/x", want: "https://EXAMPLE.com:8443/x"},
		{name: "only other", f: only, in: "https://other.com", msg: "domain other.com is not allowed"},
		{name: "except hit", f: except, in: "http://Evil.com/x", msg: "domain evil.com is not allowed"},
		{name: "except ok", f: except, in: "http://good.com/x", want: "http://good.com/x"},
	})
}

func TestEmailURLIsZero(t *testing.T) {
	for _, typ := range []string{FieldEmail, FieldURL, FieldEditor} {
		runZero(t, typ, []zeroCase{
			{name: typ + " nil", stored: nil, want: true},
			{name: typ + " empty", stored: "", want: true},
			{name: typ + " value", stored: "x", want: false},
		})
	}
}
