package logfile

import (
	"net/url"
	"regexp"
	"strings"
)

// Secrets never reach the log folder: attributes whose key names a
// secret are replaced by Redacted, and string values are scrubbed of
// what carries one (a query parameter such as ?token=, a Bearer
// credential, a JWT).

// Redacted replaces a secret value.
const Redacted = "[redacted]"

// secretWords mark a key (an attribute, a query parameter, a header) as
// holding a secret.
var secretWords = []string{"password", "passwd", "token", "secret", "authorization", "cookie",
	"api_key", "apikey", "private_key", "credential", "signature", "otp", "recovery", "setup_key", "x-setup-key"}

// SecretKey reports whether key names a secret.
func SecretKey(key string) bool {
	k := strings.ToLower(key)
	for _, w := range secretWords {
		if strings.Contains(k, w) {
			return true
		}
	}
	return k == "code" || k == "key" || k == "sig" || k == "state"
}

var (
	// secretParam is a key=value pair whose key names a secret.
	secretParam = regexp.MustCompile(`(?i)\b([a-z_\-]*(?:password|passwd|token|secret|api_?key|signature|otp|code|key|sig|state)[a-z_\-]*=)[^&\s"']*`)
	bearer      = regexp.MustCompile(`(?i)\b(bearer|basic)\s+[A-Za-z0-9\-._~+/=]+`)
	jwt         = regexp.MustCompile(`\beyJ[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]*`)
)

// Scrub removes what carries a secret from a free-form string.
func Scrub(s string) string {
	if !strings.ContainsAny(s, "=.") && !strings.Contains(strings.ToLower(s), "bearer") && !strings.Contains(strings.ToLower(s), "basic") {
		return s
	}
	s = secretParam.ReplaceAllString(s, "${1}"+Redacted)
	s = bearer.ReplaceAllString(s, "${1} "+Redacted)
	return jwt.ReplaceAllString(s, Redacted)
}

// shapeParams are the query parameters whose values say how a request
// is shaped (paging, sorting, which fields, which node), never what data
// it looks for. A log line keeps their values; every other parameter
// keeps its name only.
var shapeParams = map[string]bool{
	"page": true, "perpage": true, "sort": true, "expand": true, "fields": true, "skiptotal": true,
	"limit": true, "offset": true, "cursor": true, "node": true, "format": true, "level": true,
	"date": true, "from": true, "to": true, "mode": true, "consistency": true, "download": true,
	"thumb": true, "gzip": true, "wait": true, "timeout": true, "dry_run": true, "since": true,
}

// ScrubQuery returns a raw query string fit for a log line: the values of
// the shape parameters (scrubbed of anything that looks like a secret)
// and, for every other parameter, its name with the value Redacted. A
// filter, a search, or a value a rule reads (?expect=) is data the rules
// may hide from the admins who read logs (a viewer reads logs, not
// records), and a parameter that names a secret is never kept anyway.
func ScrubQuery(raw string) string {
	if raw == "" {
		return ""
	}
	v, err := url.ParseQuery(raw)
	if err != nil {
		return Redacted
	}
	for k, vals := range v {
		for i := range vals {
			if SecretKey(k) || !shapeParams[strings.ToLower(k)] {
				vals[i] = Redacted
			} else {
				vals[i] = Scrub(vals[i])
			}
		}
	}
	return v.Encode()
}
