package oauth2

import "fmt"

// ErrorKind says whose fault a failed exchange is, for the answer the
// client gets.
type ErrorKind int

const (
	// Refused: the provider refused the code (spent, expired, for another
	// redirect URI or verifier): the client's to fix, a 400.
	Refused ErrorKind = iota + 1
	// Invalid: the provider's answer cannot be trusted or read (an ID
	// token that does not verify, a nonce that differs, no user id): 400.
	Invalid
	// Misconfigured: the provider's settings do not work (a private key
	// that does not parse, an issuer without discovery): the operator's
	// to fix, a 503.
	Misconfigured
	// Unreachable: the provider could not be reached (network, egress
	// guard, a 5xx): a 503.
	Unreachable
)

// Error is a failed exchange.
type Error struct {
	Kind ErrorKind
	// Code is the provider's OAuth2 error code (invalid_grant, ...), if
	// it answered one.
	Code string
	Msg  string
	Err  error
}

func (e *Error) Error() string {
	s := "oauth2: " + e.Msg
	if e.Code != "" {
		s += " (" + e.Code + ")"
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// invalid is an answer of the provider that cannot be read.
func invalid(format string, args ...any) *Error {
	return &Error{Kind: Invalid, Msg: fmt.Sprintf(format, args...)}
}
