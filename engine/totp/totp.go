// Package totp owns the second factor's arithmetic: TOTP secrets and codes
// (RFC 6238 through github.com/pquerna/otp: HMAC-SHA1, 6 digits, 30-second
// step, one step of tolerance either way) and recovery codes (ten
// single-use codes of the form XXXX-XXXX, their normalization, keyed
// hashing for storage and constant-time matching).
//
// Everything here is a pure function of its arguments apart from the
// random secrets and codes: validation takes the time as an argument and
// never reads the clock, so a test (or a replica replaying a decision) gets
// the same answer for the same inputs. Storage, single use, attempt caps
// and tickets belong to the caller.
package totp

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"
)

// The TOTP parameters of SPEC.md (Authentication, item 5).
const (
	Digits     = 6
	Period     = 30 * time.Second
	Skew       = 1  // steps accepted before and after the current one
	SecretSize = 20 // bytes of secret (160 bits, RFC 4226's recommendation)
)

var opts = totp.ValidateOpts{
	Period:    uint(Period / time.Second),
	Skew:      Skew,
	Digits:    otp.DigitsSix,
	Algorithm: otp.AlgorithmSHA1,
}

// Key is a new TOTP secret: Secret is its unpadded base32 form (what users
// type and what is stored, encrypted), URL the otpauth:// URL an
// authenticator app reads from a QR code.
type Key struct {
	Secret string
	URL    string
}

// Generate makes a random secret (crypto/rand) for account (usually the
// user's email) under issuer (the application's name). Neither may be
// empty or contain a colon, which separates them in the URL's label.
func Generate(issuer, account string) (Key, error) {
	issuer, account = strings.TrimSpace(issuer), strings.TrimSpace(account)
	if issuer == "" || account == "" {
		return Key{}, errors.New("totp: issuer and account must not be empty")
	}
	if strings.Contains(issuer, ":") || strings.Contains(account, ":") {
		return Key{}, errors.New("totp: issuer and account must not contain ':'")
	}
	k, err := totp.Generate(totp.GenerateOpts{
		Issuer:      issuer,
		AccountName: account,
		Period:      opts.Period,
		SecretSize:  SecretSize,
		Digits:      opts.Digits,
		Algorithm:   opts.Algorithm,
	})
	if err != nil {
		return Key{}, fmt.Errorf("totp: generate: %w", err)
	}
	return Key{Secret: k.Secret(), URL: k.URL()}, nil
}

// Code returns the code of secret for the step that contains t.
func Code(secret string, t time.Time) (string, error) {
	c, err := totp.GenerateCodeCustom(secret, t, opts)
	if err != nil {
		return "", fmt.Errorf("totp: %w", err)
	}
	return c, nil
}

// Validate reports whether code is secret's code for the step containing
// now or the step before or after it. Spaces in code are ignored ("123
// 456"). A malformed code or secret is simply not valid.
func Validate(code, secret string, now time.Time) bool {
	_, ok := Match(code, secret, now)
	return ok
}

// Match is Validate that also returns the step counter (Unix time / 30 s)
// the code belongs to. A caller that records the last counter used per
// account and refuses counters at or below it makes each code single-use
// (RFC 6238, section 5.2).
func Match(code, secret string, now time.Time) (counter int64, ok bool) {
	code = strings.ReplaceAll(code, " ", "")
	if len(code) != Digits || strings.Trim(code, "0123456789") != "" {
		return 0, false
	}
	cur := StepOf(now)
	found := false
	// All three steps are computed and compared without an early exit.
	for d := int64(-Skew); d <= Skew; d++ {
		c, err := totp.GenerateCodeCustom(secret, now.Add(time.Duration(d)*Period), opts)
		if err != nil {
			return 0, false
		}
		if subtle.ConstantTimeCompare([]byte(c), []byte(code)) == 1 && !found {
			found, counter = true, cur+d
		}
	}
	return counter, found
}

// StepOf is the RFC 6238 counter of the step that contains t.
func StepOf(t time.Time) int64 {
	s := t.Unix()
	p := int64(Period / time.Second)
	if s < 0 {
		return (s - p + 1) / p
	}
	return s / p
}
