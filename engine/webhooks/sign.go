package webhooks

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
)

// Signatures (SPEC.md "Webhook events"; CONTRACT.md: the key is the
// secret string as stored, its bytes as they are, not hex-decoded):
//
//	x-svc-signature: sha256=<hex of HMAC-SHA-256(secret, "<x-svc-timestamp>.<raw body>")>

// SignaturePrefix starts the x-svc-signature header.
const SignaturePrefix = "sha256="

// Sign is the x-svc-signature value of body sent at timestamp (unix
// seconds) under secret.
func Sign(secret string, timestamp int64, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(strconv.FormatInt(timestamp, 10)))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return SignaturePrefix + hex.EncodeToString(mac.Sum(nil))
}

// Verify is what a receiver does: the signature must be Sign's, compared
// in constant time, and the timestamp within tolerance seconds of now.
func Verify(secret, signature, timestamp string, body []byte, now, tolerance int64) bool {
	ts, err := strconv.ParseInt(strings.TrimSpace(timestamp), 10, 64)
	if err != nil || ts < now-tolerance || ts > now+tolerance {
		return false
	}
	return hmac.Equal([]byte(Sign(secret, ts, body)), []byte(strings.TrimSpace(signature)))
}
