package pbcompat

import (
	"errors"
	"net/http"
	"reflect"
	"testing"

	"svcd/engine"
)

// TestFromEngine: svcd's errors become PocketBase's envelope (plan §1.1's
// table; pb:tools/router/error.go for the default messages).
func TestFromEngine(t *testing.T) {
	cases := []struct {
		name       string
		err        error
		status     int
		message    string
		data       map[string]any
		retryAfter int
	}{
		{"not found", engine.ErrNotFound, 404, MsgNotFound, map[string]any{}, 0},
		{"admin only", engine.ErrAdminOnly, 403, MsgSuperuserOnly, map[string]any{}, 0},
		{"forbidden keeps its message", engine.ErrForbidden, 403, "You are not allowed to perform this request.", map[string]any{}, 0},
		{"unauthorized", engine.Errorf(engine.KindUnauthorized, "Invalid or expired token"), 401, MsgAuthRequired, map[string]any{}, 0},
		{"validation", engine.ValidationError(map[string]string{"title": "cannot be blank", "email": "must be a valid email address", "x": "weird"}), 400, MsgValidation,
			map[string]any{
				"title": FieldError{"validation_required", "Cannot be blank."},
				"email": FieldError{"validation_is_email", "Must be a valid email address."},
				"x":     FieldError{"validation_invalid_value", "Weird."},
			}, 0},
		{"unavailable keeps Retry-After", &engine.Error{Kind: engine.KindUnavailable, Message: "No leader", RetryAfter: 2}, 503, "No leader.", map[string]any{}, 2},
		{"internal hides its cause", &engine.Error{Kind: engine.KindInternal, Message: "disk I/O error"}, 500, MsgInternal, map[string]any{}, 0},
		{"a plain error is a 500", errors.New("boom"), 500, MsgInternal, map[string]any{}, 0},
		{"a PocketBase error passes", NewError(http.StatusBadRequest, MsgFailedCreate, nil), 400, MsgFailedCreate, map[string]any{}, 0},
	}
	for _, c := range cases {
		got := FromEngine(c.err)
		if got.Status != c.status || got.Message != c.message || got.RetryAfter != c.retryAfter || !reflect.DeepEqual(got.Data, c.data) {
			t.Errorf("%s: %+v, want %d %q %v (retry %d)", c.name, got, c.status, c.message, c.data, c.retryAfter)
		}
	}
}

// TestWriteFailure: record writes answer PocketBase's statuses for rule
// and validation refusals (pb:apis/record_crud.go).
func TestWriteFailure(t *testing.T) {
	val := engine.FieldError("title", "cannot be blank")
	cases := []struct {
		err     error
		failed  string
		status  int
		message string
	}{
		{val, MsgFailedCreate, 400, MsgFailedCreate},
		{val, MsgFailedUpdate, 400, MsgFailedUpdate},
		{engine.ErrForbidden, MsgFailedCreate, 400, MsgFailedCreate},
		{engine.ErrForbidden, MsgFailedUpdate, 404, MsgNotFound},
		{engine.ErrForbidden, "", 404, MsgNotFound},
		{engine.ErrAdminOnly, MsgFailedUpdate, 403, MsgSuperuserOnly},
		{engine.ErrNotFound, MsgFailedUpdate, 404, MsgNotFound},
	}
	for _, c := range cases {
		got := FromEngine(WriteFailure(c.err, c.failed))
		if got.Status != c.status || got.Message != c.message {
			t.Errorf("%v (%q): %d %q, want %d %q", c.err, c.failed, got.Status, got.Message, c.status, c.message)
		}
	}
}
