package flags

import (
	"crypto/sha256"
	"encoding/binary"
	"math"
	"strconv"
)

// Percentage rollouts. A rule with rollout {value, sticky} admits a
// context when its bucket is below value × 100 (rounded), where the
// bucket of a flag key and a sticky value s is
//
//	bucket = uint64_be(first 8 bytes of SHA-256(key + ":" + s)) mod 10000
//
// and s is the context's sticky attribute written as text: a string as
// it is, a number in its shortest decimal form (42, 1.5, as JSON writes
// it), a boolean as true or false. The bucket depends on nothing else
// (not the node, not the version, not the rule), so a user keeps their
// bucket wherever and whenever the flag is evaluated, raising the
// percentage only adds users, and two flags bucket independently. A
// context without the sticky attribute (or with a null, an array or an
// object there) is in no rollout. docs/flags.md documents the same
// formula for clients that want to reproduce it.

// buckets is the number of rollout buckets: percentages have two decimals.
const buckets = 10000

// Bucket is the rollout bucket (0-9999) of sticky value s for flag key.
func Bucket(key, s string) uint64 {
	var buf [192]byte
	b := append(buf[:0], key...)
	b = append(b, ':')
	b = append(b, s...)
	sum := sha256.Sum256(b)
	return binary.BigEndian.Uint64(sum[:8]) % buckets
}

// threshold is the number of buckets a rollout percentage admits.
func threshold(percent float64) uint64 {
	return uint64(math.Round(min(max(percent, 0), 100) * 100))
}

// stickyText writes a context value as the text the bucket hashes; ok
// is false for values that cannot be bucketed (null, arrays, objects).
func stickyText(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case bool:
		return strconv.FormatBool(x), true
	case int:
		return strconv.Itoa(x), true
	case int64:
		return strconv.FormatInt(x, 10), true
	}
	f, ok := number(v)
	if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
		return "", false
	}
	return formatNumber(f), true
}

// formatNumber writes f as encoding/json does: the shortest decimal
// form, with an exponent only below 1e-6 or from 1e21.
func formatNumber(f float64) string {
	abs := math.Abs(f)
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		s := strconv.FormatFloat(f, 'e', -1, 64)
		// 1e-07 -> 1e-7, as JSON writes it.
		if n := len(s); n >= 4 && s[n-4] == 'e' && s[n-3] == '-' && s[n-2] == '0' {
			s = s[:n-2] + s[n-1:]
		}
		return s
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}
