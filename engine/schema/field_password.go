package schema

import (
	"fmt"
	"unicode/utf8"
)

var _ FieldType = passwordType{}

// maxPasswordLength caps every password, whatever max says.
const maxPasswordLength = 1024

// passwordType is a write-only secret. Normalize checks the plaintext's
// length and returns it unchanged; the engine hashes it (argon2id) before
// storage and applies the global password policy. "" means no password.
// Stored as TEXT (the hash); never emitted: AppendJSON writes null.
type passwordType struct{}

func (passwordType) Name() string { return FieldPassword }

func (passwordType) Column(*Field) Column { return ColText }

func (passwordType) OptionKeys() []string { return []string{"min", "max"} }

func (passwordType) CleanOptions(f *Field, _ Lookup) string {
	o := f.Options
	f.Options = Options{Min: o.Min, Max: o.Max}
	return cleanCharBounds(&f.Options, maxPasswordLength)
}

func (passwordType) Normalize(f *Field, in any) (any, string) {
	if in == nil {
		return nil, ""
	}
	s, ok := in.(string)
	if !ok {
		return nil, "must be a string"
	}
	if s == "" {
		return nil, ""
	}
	if !utf8.ValidString(s) {
		return nil, "must be valid UTF-8 text"
	}
	if utf8.RuneCountInString(s) > maxPasswordLength {
		return nil, fmt.Sprintf("must be at most %d characters", maxPasswordLength)
	}
	if msg := checkCharBounds(&f.Options, s); msg != "" {
		return nil, msg
	}
	return s, ""
}

func (passwordType) IsZero(_ *Field, stored any) bool { return isZeroText(stored) }

// AppendJSON writes null: a password is never part of a response.
func (passwordType) AppendJSON(buf []byte, _ *Field, _ any) []byte {
	return append(buf, "null"...)
}
