package pbcompat

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"svcd/engine"
)

// Error is PocketBase's error answer (pb:tools/router/error.go ApiError):
// {"status":N,"message":"...","data":{field:{"code":"...","message":"..."}}}.
// Parts build their own with NewError when an answer must differ from
// the default mapping of an engine error.
type Error struct {
	Status  int            `json:"status"`
	Message string         `json:"message"`
	Data    map[string]any `json:"data"`
	// RetryAfter (seconds) becomes a Retry-After header when set.
	RetryAfter int `json:"-"`
}

func (e *Error) Error() string { return e.Message }

// FieldError is one entry of Error.Data.
type FieldError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// NewError builds a PocketBase error; an empty message takes PocketBase's
// default for the status. data may be nil.
func NewError(status int, message string, data map[string]any) *Error {
	if message == "" {
		message = defaultMessage(status)
	}
	if data == nil {
		data = map[string]any{}
	}
	return &Error{Status: status, Message: sentenize(message), Data: data}
}

// Messages PocketBase answers with (pb:tools/router/error.go, apis/*).
const (
	MsgNotFound      = "The requested resource wasn't found."
	MsgBadRequest    = "Something went wrong while processing your request."
	MsgForbidden     = "You are not allowed to perform this request."
	MsgUnauthorized  = "Missing or invalid authentication."
	MsgInternal      = "Something went wrong while processing your request."
	MsgTooMany       = "Too Many Requests."
	MsgValidation    = "An error occurred while validating the submitted data."
	MsgAuthRequired  = "The request requires valid record authorization token."
	MsgSuperuserOnly = "Only superusers can perform this action."
	// MsgNotAllowed is RequireSuperuserAuth's 403 for a signed-in caller
	// who is not a superuser (pb:apis/middlewares.go requireAuth).
	MsgNotAllowed   = "The authorized record is not allowed to perform this action."
	MsgFailedCreate = "Failed to create record."
	MsgFailedUpdate = "Failed to update record."
	MsgFailedDelete = "Failed to delete record. Make sure that the record is not part of a required relation reference."
	MsgFailedAuth   = "Failed to authenticate."
)

func defaultMessage(status int) string {
	switch status {
	case http.StatusNotFound:
		return MsgNotFound
	case http.StatusForbidden:
		return MsgForbidden
	case http.StatusUnauthorized:
		return MsgUnauthorized
	case http.StatusTooManyRequests:
		return MsgTooMany
	case http.StatusBadRequest:
		return MsgBadRequest
	}
	if status >= 500 {
		return MsgInternal
	}
	return http.StatusText(status) + "."
}

// statusOf maps engine error kinds to statuses (the same as /api/v1's,
// except validation, which PocketBase answers with 400).
var statusOf = map[engine.Kind]int{
	engine.KindInternal:            http.StatusInternalServerError,
	engine.KindBadRequest:          http.StatusBadRequest,
	engine.KindUnauthorized:        http.StatusUnauthorized,
	engine.KindForbidden:           http.StatusForbidden,
	engine.KindNotFound:            http.StatusNotFound,
	engine.KindMethodNotAllowed:    http.StatusMethodNotAllowed,
	engine.KindConflict:            http.StatusConflict,
	engine.KindPrecondition:        http.StatusPreconditionFailed,
	engine.KindValidation:          http.StatusBadRequest,
	engine.KindUnavailable:         http.StatusServiceUnavailable,
	engine.KindTooManyRequests:     http.StatusTooManyRequests,
	engine.KindTooLarge:            http.StatusRequestEntityTooLarge,
	engine.KindTimeout:             http.StatusRequestTimeout,
	engine.KindInsufficientStorage: http.StatusInsufficientStorage,
	engine.KindGone:                http.StatusGone,
	engine.KindUnsupportedMedia:    http.StatusUnsupportedMediaType,
}

// FromEngine translates err (an *Error, an *engine.Error or anything else)
// into PocketBase's error. Unknown errors are 500s with PocketBase's
// generic message (the cause is not shown).
func FromEngine(err error) *Error {
	var pe *Error
	if errors.As(err, &pe) {
		return pe
	}
	e := engine.AsError(err)
	if e == nil {
		return NewError(http.StatusInternalServerError, "", nil)
	}
	status := statusOf[e.Kind]
	if status == 0 || status >= 500 && status != http.StatusServiceUnavailable && status != http.StatusInsufficientStorage {
		return NewError(http.StatusInternalServerError, "", nil)
	}
	var msg string
	switch {
	case e.Kind == engine.KindValidation:
		msg = MsgValidation
	case e.Kind == engine.KindNotFound:
		msg = MsgNotFound
	case e.Kind == engine.KindUnauthorized:
		msg = MsgAuthRequired
	case errors.Is(e, engine.ErrAdminOnly):
		msg = MsgSuperuserOnly
	default:
		msg = e.Message
	}
	out := NewError(status, msg, fieldData(e.Details))
	out.RetryAfter = e.RetryAfter
	return out
}

// fieldData turns svcd's details ({field: "message"}) into PocketBase's
// {field: {code, message}}. Nested details (a map) recurse, as
// PocketBase's nested validation errors do.
func fieldData(details map[string]any) map[string]any {
	out := make(map[string]any, len(details))
	for k, v := range details {
		switch x := v.(type) {
		case string:
			out[k] = FieldError{Code: codeOf(x), Message: sentenize(capitalize(x))}
		case map[string]any:
			out[k] = fieldData(x)
		default:
			b, _ := json.Marshal(x)
			out[k] = FieldError{Code: "validation_invalid_value", Message: sentenize(capitalize(string(b)))}
		}
	}
	return out
}

// codeRules maps svcd's validation messages to PocketBase's error codes
// (pb:core/validators and ozzo-validation's codes), first match wins.
var codeRules = []struct{ contains, code string }{
	{"cannot be blank", "validation_required"},
	{"is required", "validation_required"},
	{"must be unique", "validation_not_unique"},
	{"already exists", "validation_not_unique"},
	{"valid email", "validation_is_email"},
	{"valid url", "validation_is_url"},
	{"do not match", "validation_values_mismatch"},
	{"does not match", "validation_values_mismatch"},
	{"length", "validation_length_out_of_range"},
	{"characters", "validation_length_out_of_range"},
	{"at least", "validation_min_greater_equal_than_required"},
	{"at most", "validation_max_less_equal_than_required"},
	{"unknown field", "validation_unknown_field"},
}

func codeOf(msg string) string {
	low := strings.ToLower(msg)
	for _, r := range codeRules {
		if strings.Contains(low, r.contains) {
			return r.code
		}
	}
	return "validation_invalid_value"
}

func capitalize(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 || unicode.IsUpper(r) {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

// sentenize ends s with a period, as PocketBase's messages do.
func sentenize(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return s
	}
	if strings.ContainsRune(".!?", rune(s[len(s)-1])) {
		return s
	}
	return s + "."
}

// WriteError answers err as PocketBase's error envelope.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	e := FromEngine(err)
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(e.RetryAfter))
	}
	if e.Status == http.StatusUnauthorized {
		// RFC 9110 asks for it on a 401; PocketBase's SDK ignores it.
		w.Header().Set("WWW-Authenticate", `Bearer realm="svc"`)
	}
	if ee := engine.AsError(err); ee != nil && ee.ETag != "" {
		w.Header().Set("ETag", ee.ETag)
	}
	WriteJSON(w, e.Status, e)
}

// WriteJSON writes v as JSON with status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte(fmt.Sprintf(`{"status":500,"message":%q,"data":{}}`, MsgInternal))
		status = http.StatusInternalServerError
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}
