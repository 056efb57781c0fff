package engine

import (
	"errors"
	"math"
	"reflect"
	"testing"

	"svcd/fsm"
)

func TestResultCodecRoundTrip(t *testing.T) {
	e := codecEngine()
	cases := []struct {
		v   any
		err error
	}{
		{nil, nil},
		{Row{"id1", int64(1700000000), nil, 2.5, math.Inf(1) * 0, "", []byte{0, 1, 2}, int64(-9007199254740993), 0.1}, nil},
		{nil, &Error{Kind: KindPrecondition, Message: "changed", ETag: `W/"x-1"`, Details: map[string]any{"a": "b"}}},
		{nil, errors.New("disk full")},
	}
	for i, c := range cases {
		if f, ok := c.v.(Row); ok {
			f[4] = 0.0 // keep NaN out: it never is stored
		}
		b, err := e.EncodeResult(c.v, c.err)
		if err != nil {
			t.Fatal(err)
		}
		v, derr := e.DecodeResult(b)
		if !reflect.DeepEqual(v, c.v) && !(c.v == nil && v == nil) {
			t.Errorf("case %d: value %#v, want %#v", i, v, c.v)
		}
		if (derr == nil) != (c.err == nil) || (derr != nil && derr.Error() != c.err.Error()) {
			t.Errorf("case %d: error %v, want %v", i, derr, c.err)
		}
		var de *Error
		if errors.As(c.err, &de) && !errors.Is(derr, de) {
			t.Errorf("case %d: domain error not preserved: %v", i, derr)
		}
	}
}

// codecEngine is an engine with the core's registrations and no store:
// enough to encode and decode results.
func codecEngine() *Engine {
	e := &Engine{}
	e.reg.fsm = fsm.NewRegistry()
	e.register()
	return e
}

// TestUnregisteredResultFailsTheCommand: a handler that returns a type no
// codec knows fails its command on every node, not only on followers.
func TestUnregisteredResultFailsTheCommand(t *testing.T) {
	e := codecEngine()
	h := e.checked("test.bad", func(*fsm.Tx, fsm.Command) (any, error) { return []any{"positional"}, nil })
	if _, err := h(nil, fsm.Command{}); err == nil {
		t.Fatal("a handler returning an unregistered []any succeeded")
	}
	if _, err := e.EncodeResult([]any{"x"}, nil); err == nil {
		t.Fatal("an unregistered result encoded")
	}
}
