package engine

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"strings"
	"time"
)

// The breached-password check (password.hibp_check): the k-anonymity
// range API of Have I Been Pwned, or a compatible mirror at
// password.hibp_url. Only the first five hex digits of the password's
// SHA-1 leave the node; the answer lists the suffixes with that prefix.
// Requests go through the SSRF guard and ask for padded answers. If the
// service cannot be reached the password is accepted (and a warning
// logged): an outage must not stop sign-ups and password changes.

const (
	hibpDefaultURL = "https://api.pwnedpasswords.com/range/"
	hibpTimeout    = 5 * time.Second
)

// breached reports whether the range API lists plain.
func (rs *Records) breached(plain string) bool {
	out, err := rs.e.outboundHTTP()
	if err != nil {
		rs.e.log.Warn("password.hibp_check is on but this node has no outbound HTTP")
		return false
	}
	sum := sha1.Sum([]byte(plain))
	h := strings.ToUpper(hex.EncodeToString(sum[:]))
	base := strings.TrimSpace(rs.e.Setting("password.hibp_url"))
	if base == "" {
		base = hibpDefaultURL
	}
	ctx, cancel := context.WithTimeout(context.Background(), hibpTimeout)
	defer cancel()
	status, body, err := out.Get(ctx, base+h[:5], map[string]string{"Add-Padding": "true", "User-Agent": "svcd"})
	if err != nil || status != 200 {
		rs.e.log.Warn("breached-password check unavailable; password accepted", "status", status, "err", err)
		return false
	}
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		suffix, count, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":")
		if ok && strings.EqualFold(suffix, h[5:]) && strings.TrimSpace(count) != "0" {
			return true
		}
	}
	return false
}
