package engine

import (
	"errors"
	"fmt"
)

// Kind classifies a domain error; the api package maps each to one status.
type Kind uint8

const (
	KindInternal Kind = iota
	KindBadRequest
	KindUnauthorized
	KindForbidden
	KindNotFound
	KindMethodNotAllowed
	KindConflict
	KindPrecondition
	KindValidation
	KindUnavailable
	KindTooManyRequests
	KindTooLarge
	// KindTimeout is a request the client did not finish sending in time
	// (408).
	KindTimeout
	// KindInsufficientStorage is a write refused for a full disk (507).
	KindInsufficientStorage
	// KindGone is a one-time credential used again (410).
	KindGone
	// KindUnsupportedMedia is content of a type the service refuses (415).
	KindUnsupportedMedia
)

// Error is a domain error. It holds only plain data so that it can cross
// nodes with the command result.
type Error struct {
	Kind    Kind           `json:"kind"`
	Message string         `json:"message"`
	Details map[string]any `json:"details,omitempty"`
	// ETag is the current entity tag for a failed precondition.
	ETag string `json:"etag,omitempty"`
	// RetryAfter (seconds) for unavailable and rate-limited answers.
	RetryAfter int `json:"retry_after,omitempty"`
}

func (e *Error) Error() string {
	if len(e.Details) > 0 {
		return fmt.Sprintf("%s: %v", e.Message, e.Details)
	}
	return e.Message
}

func newErr(k Kind, format string, args ...any) *Error {
	return &Error{Kind: k, Message: fmt.Sprintf(format, args...)}
}

// Errorf builds a domain error of kind k.
func Errorf(k Kind, format string, args ...any) *Error { return newErr(k, format, args...) }

// ValidationError is a 422 with one message per field.
func ValidationError(details map[string]string) *Error {
	d := make(map[string]any, len(details))
	for k, v := range details {
		d[k] = v
	}
	return &Error{Kind: KindValidation, Message: "Validation failed", Details: d}
}

// FieldError is a 422 for one field.
func FieldError(field, msg string) *Error {
	return ValidationError(map[string]string{field: msg})
}

// Errors the core and its modules answer with.
var (
	ErrNotFound    = &Error{Kind: KindNotFound, Message: "The requested resource wasn't found"}
	ErrForbidden   = &Error{Kind: KindForbidden, Message: "You are not allowed to perform this request"}
	ErrAdminOnly   = &Error{Kind: KindForbidden, Message: "Only admins can perform this action"}
	errViewWrite   = &Error{Kind: KindMethodNotAllowed, Message: "View collections are read-only"}
	ErrSchemaMoved = &Error{Kind: KindConflict, Message: "The collection changed while the request was in flight; retry"}
)

// AsError returns err as a domain error, or nil.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}

// Is matches domain errors by kind and message, so an error that crossed a
// node boundary still matches its sentinel.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Kind == e.Kind && t.Message == e.Message
}

// FirstErr is err when set, else alt.
func FirstErr(err error, alt *Error) error {
	if err != nil {
		return err
	}
	return alt
}
