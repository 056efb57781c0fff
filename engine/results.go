package engine

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
)

// Command results cross nodes when a follower forwards a write to the
// leader. EncodeResult and DecodeResult (the cluster's ResultCodec) carry
// a handler's result and its error exactly. Each result type is registered
// beside the handler that returns it (RegisterResult) under a tag, and the
// wire form is one JSON object: the result under its tag, and the error
// ("err": a domain error keeps kind, message, details and ETag;
// "internal": any other error's text). No tag, no result: nil.
//
// The tags "row", "batch" and "csv" keep the names of the earlier fixed
// wire form, so a follower of this version decodes what a leader of the
// previous one sends during a rolling upgrade.

// Row is one record as stored: id, created, updated, then every field of
// its collection, each value of its SQLite type (nil, int64, float64,
// string or []byte). Record commands return it; it crosses nodes with
// every value's type kept.
type Row []any

// resultCodec is one registered result type.
type resultCodec struct {
	tag    string
	encode func(v any) (json.RawMessage, error)
	decode func(b json.RawMessage) (any, error)
}

// resultCodecs maps result types to codecs and tags back to them.
type resultCodecs struct {
	byType map[reflect.Type]*resultCodec
	byTag  map[string]*resultCodec
}

func (r *registries) result(t reflect.Type, c *resultCodec) {
	r.mustOpen("result " + c.tag)
	if r.results.byType == nil {
		r.results.byType, r.results.byTag = map[reflect.Type]*resultCodec{}, map[string]*resultCodec{}
	}
	if _, dup := r.results.byTag[c.tag]; dup || c.tag == "err" || c.tag == "internal" {
		panic("engine: result tag " + c.tag + " registered twice or reserved")
	}
	if _, dup := r.results.byType[t]; dup {
		panic("engine: result type " + t.String() + " registered twice")
	}
	r.results.byType[t], r.results.byTag[c.tag] = c, c
}

// RegisterResult registers *T as a command result that crosses nodes as
// its JSON under tag. Handlers return a *T; the proposer on a follower
// receives a *T too.
func RegisterResult[T any](e *Engine, tag string) {
	e.reg.result(reflect.TypeFor[*T](), &resultCodec{
		tag:    tag,
		encode: func(v any) (json.RawMessage, error) { return json.Marshal(v) },
		decode: func(b json.RawMessage) (any, error) {
			v := new(T)
			if err := json.Unmarshal(b, v); err != nil {
				return nil, err
			}
			return v, nil
		},
	})
}

// registerRowResult registers Row with its typed codec.
func (e *Engine) registerRowResult() {
	e.reg.result(reflect.TypeFor[Row](), &resultCodec{tag: "row", encode: encodeRow, decode: decodeRow})
}

// EncodeResult encodes a command's result and error.
func (e *Engine) EncodeResult(v any, err error) ([]byte, error) {
	w := map[string]any{}
	if v != nil {
		c := e.reg.results.byType[reflect.TypeOf(v)]
		if c == nil {
			return nil, fmt.Errorf("engine: result %T is not registered (RegisterResult)", v)
		}
		b, werr := c.encode(v)
		if werr != nil {
			return nil, werr
		}
		w[c.tag] = b
	}
	if err != nil {
		var de *Error
		if errors.As(err, &de) {
			w["err"] = de
		} else {
			w["internal"] = err.Error()
		}
	}
	return json.Marshal(w)
}

// DecodeResult decodes what EncodeResult produced.
func (e *Engine) DecodeResult(b []byte) (any, error) {
	var w map[string]json.RawMessage
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, fmt.Errorf("engine: decode result: %w", err)
	}
	var err error
	if raw, ok := w["err"]; ok {
		de := &Error{}
		if jerr := json.Unmarshal(raw, de); jerr != nil {
			return nil, fmt.Errorf("engine: decode result error: %w", jerr)
		}
		err = de
	} else if raw, ok := w["internal"]; ok {
		var s string
		if jerr := json.Unmarshal(raw, &s); jerr != nil {
			return nil, fmt.Errorf("engine: decode result error: %w", jerr)
		}
		err = errors.New(s)
	}
	for tag, raw := range w {
		c := e.reg.results.byTag[tag]
		if c == nil {
			continue // err, internal, or a legacy marker (has_row)
		}
		v, derr := c.decode(raw)
		if derr != nil {
			return nil, fmt.Errorf("engine: decode %s result: %w", tag, derr)
		}
		return v, err
	}
	return nil, err
}

// wireValue is one value of a Row with its SQLite type.
type wireValue struct {
	T string `json:"t"`           // n, i, f, s, b
	V string `json:"v,omitempty"` // the value as text (base64 for b)
}

func encodeRow(v any) (json.RawMessage, error) {
	row := v.(Row)
	out := make([]wireValue, len(row))
	for i, x := range row {
		wv, err := encodeValue(x)
		if err != nil {
			return nil, err
		}
		out[i] = wv
	}
	return json.Marshal(out)
}

func decodeRow(b json.RawMessage) (any, error) {
	var in []wireValue
	if err := json.Unmarshal(b, &in); err != nil {
		return nil, err
	}
	row := make(Row, len(in))
	for i, x := range in {
		v, err := decodeValue(x)
		if err != nil {
			return nil, err
		}
		row[i] = v
	}
	return row, nil
}

func encodeValue(x any) (wireValue, error) {
	switch v := x.(type) {
	case nil:
		return wireValue{T: "n"}, nil
	case int64:
		return wireValue{T: "i", V: strconv.FormatInt(v, 10)}, nil
	case float64:
		return wireValue{T: "f", V: strconv.FormatFloat(v, 'g', -1, 64)}, nil
	case string:
		return wireValue{T: "s", V: v}, nil
	case []byte:
		return wireValue{T: "b", V: base64.StdEncoding.EncodeToString(v)}, nil
	}
	return wireValue{}, fmt.Errorf("engine: cannot encode value %T", x)
}

func decodeValue(w wireValue) (any, error) {
	switch w.T {
	case "n":
		return nil, nil
	case "i":
		return strconv.ParseInt(w.V, 10, 64)
	case "f":
		return strconv.ParseFloat(w.V, 64)
	case "s":
		return w.V, nil
	case "b":
		return base64.StdEncoding.DecodeString(w.V)
	}
	return nil, fmt.Errorf("engine: unknown value tag %q", w.T)
}
