package webhooks

import (
	"sort"
	"strings"
)

// Custom headers (SPEC.md: "reserved/security headers stripped"). A
// webhook's custom_headers are added to each of its requests, except:
//
//   - the headers the delivery sets itself: content-type, user-agent and
//     every x-svc-* header (x-svc-event, x-svc-delivery, x-svc-timestamp,
//     x-svc-signature), so a receiver can trust them;
//   - headers that belong to the connection or the client, not to the
//     application: host, content-length, transfer-encoding, connection,
//     keep-alive, te, trailer, upgrade, expect, cookie, every proxy-*
//     header, forwarded, x-forwarded-* and x-real-ip.
//
// These are dropped when the webhook is saved (GET shows what is sent)
// and again when a request is built. authorization is allowed: it is how
// most receivers authenticate their callers.

const (
	maxHeaders     = 50
	maxHeaderValue = 4096
)

// strippedHeaders are the names dropped, lower case.
var strippedHeaders = map[string]bool{
	"content-type": true, "user-agent": true,
	"host": true, "content-length": true, "transfer-encoding": true, "connection": true,
	"keep-alive": true, "te": true, "trailer": true, "upgrade": true, "expect": true,
	"cookie": true, "forwarded": true, "x-real-ip": true,
}

// stripped reports whether header name (any case) is dropped.
func stripped(name string) bool {
	n := strings.ToLower(name)
	return strippedHeaders[n] || strings.HasPrefix(n, "x-svc-") || strings.HasPrefix(n, "proxy-") ||
		strings.HasPrefix(n, "x-forwarded-")
}

// cleanHeaders validates custom headers and drops the stripped ones;
// names are kept in lower case (HTTP header names are case-insensitive).
func cleanHeaders(in map[string]any) (map[string]string, string) {
	if len(in) > maxHeaders {
		return nil, "at most 50 headers"
	}
	names := make([]string, 0, len(in))
	for k := range in {
		names = append(names, k)
	}
	sort.Strings(names)
	out := make(map[string]string, len(in))
	for _, k := range names {
		v, ok := in[k].(string)
		if !ok {
			return nil, "header " + quote(k) + ": the value must be a string"
		}
		if !validName(k) {
			return nil, "header " + quote(k) + ": not a valid header name"
		}
		if len(v) > maxHeaderValue || strings.ContainsAny(v, "\r\n\x00") {
			return nil, "header " + quote(k) + ": the value must be one line of at most 4096 characters"
		}
		if stripped(k) {
			continue
		}
		n := strings.ToLower(k)
		if _, dup := out[n]; dup {
			return nil, "header " + quote(k) + " is given twice"
		}
		out[n] = v
	}
	return out, ""
}

// validName reports an RFC 9110 token.
func validName(s string) bool {
	if s == "" || len(s) > 256 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}
