package jsvm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/dop251/goja"
)

// Values cross between Go and JavaScript as JSON: what a helper answers
// is parsed into plain objects and arrays (code may change them like any
// other), and what code hands a helper is stringified as JSON.stringify
// would (undefined members dropped, dates as ISO text), then decoded in
// Go with numbers kept exact, as a client's JSON body is.

// bridge converts values on one runtime.
type bridge struct {
	rt        *goja.Runtime
	parse     goja.Callable
	stringify goja.Callable
}

func newBridge(rt *goja.Runtime) *bridge {
	j := rt.Get("JSON").ToObject(rt)
	parse, _ := goja.AssertFunction(j.Get("parse"))
	stringify, _ := goja.AssertFunction(j.Get("stringify"))
	return &bridge{rt: rt, parse: parse, stringify: stringify}
}

// fromJSON is the JavaScript value of JSON text.
func (b *bridge) fromJSON(raw []byte) goja.Value {
	if len(raw) == 0 {
		return goja.Null()
	}
	v, err := b.parse(goja.Undefined(), b.rt.ToValue(string(raw)))
	if err != nil {
		panic(b.rt.NewGoError(fmt.Errorf("helpers: decode a value: %w", err)))
	}
	return v
}

// fromGo is the JavaScript value of a Go value (through its JSON).
func (b *bridge) fromGo(v any) goja.Value {
	if v == nil {
		return goja.Null()
	}
	raw, err := json.Marshal(v)
	if err != nil {
		panic(b.rt.NewGoError(fmt.Errorf("helpers: encode a value: %w", err)))
	}
	return b.fromJSON(raw)
}

// toJSON is JSON.stringify(v); ok is false for a value JSON cannot hold
// (undefined, a function).
func (b *bridge) toJSON(v goja.Value) ([]byte, bool, error) {
	out, err := b.stringify(goja.Undefined(), v)
	if err != nil {
		return nil, false, err
	}
	if goja.IsUndefined(out) {
		return nil, false, nil
	}
	return []byte(out.String()), true, nil
}

// toGo is v as Go sees a client's JSON: maps, slices, json.Number,
// strings, booleans and nil.
func (b *bridge) toGo(v goja.Value) (any, error) {
	raw, ok, err := b.toJSON(v)
	if err != nil || !ok {
		return nil, err
	}
	return decodeJSON(raw)
}

// toObject is v as a JSON object, or an error naming what for.
func (b *bridge) toObject(v goja.Value, what string) (map[string]any, error) {
	x, err := b.toGo(v)
	if err != nil {
		return nil, err
	}
	if x == nil {
		return nil, nil
	}
	m, ok := x.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s must be an object", what)
	}
	return m, nil
}

// decodeJSON decodes one JSON value with numbers kept exact.
func decodeJSON(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("trailing data")
	}
	return v, nil
}

// jsonMarshal encodes a Go value that came from code (json.Number kept).
func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }
