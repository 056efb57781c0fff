package engine

import (
	"errors"
	"reflect"
	"testing"
)

// TestBatchResultCodec: a batch's answers and a batch's error cross from
// the leader to a forwarding follower unchanged.
func TestBatchResultCodec(t *testing.T) {
	e := codecEngine()
	in := &BatchResult{Items: []BatchItem{{Body: []byte(`{"id":"a","t":"\u00e9\n"}`)}, {}, {Body: []byte(`{"data":[],"page":1}`)}, {Body: []byte(`{"id":"b"}`), Created: true}}}
	b, err := e.EncodeResult(in, nil)
	if err != nil {
		t.Fatal(err)
	}
	v, err := e.DecodeResult(b)
	if err != nil || !reflect.DeepEqual(v, in) {
		t.Fatalf("decoded %#v, %v; want %#v", v, err, in)
	}
	cause := &Error{Kind: KindPrecondition, Message: "changed", ETag: `W/"e-1"`, Details: map[string]any{"title": "x"}}
	b, err = e.EncodeResult(nil, BatchError(57, cause))
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.DecodeResult(b)
	de := AsError(err)
	if de == nil || de.Kind != KindPrecondition || de.Message != "batch failed at request 57: changed" ||
		de.ETag != cause.ETag || !reflect.DeepEqual(de.Details, cause.Details) {
		t.Fatalf("decoded error %#v", err)
	}
	// A schema move is not wrapped: the proposer retries the whole batch.
	if err := BatchError(3, ErrSchemaMoved); !errors.Is(err, ErrSchemaMoved) {
		t.Fatalf("schema moved wrapped as %v", err)
	}
}
