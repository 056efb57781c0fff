package engine

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// Command results cross nodes when a follower forwards a write to the
// leader. EncodeResult and DecodeResult (the cluster's ResultCodec) carry a
// handler's result (nil, one row of stored values, a batch's rendered
// answers or a CSV import chunk's failed rows) and its error exactly:
// each value keeps its SQLite type, and domain errors keep kind, message,
// details and ETag.

type wireValue struct {
	T string `json:"t"`           // n, i, f, s, b
	V string `json:"v,omitempty"` // the value as text (base64 for b)
}

type wireResult struct {
	Row      []wireValue     `json:"row,omitempty"`
	HasRow   bool            `json:"has_row,omitempty"`
	Batch    *BatchResult    `json:"batch,omitempty"`
	CSV      *csvChunkResult `json:"csv,omitempty"`
	Err      *Error          `json:"err,omitempty"`
	Internal string          `json:"internal,omitempty"`
}

// EncodeResult encodes a command's result and error.
func (e *Engine) EncodeResult(v any, err error) ([]byte, error) {
	var w wireResult
	switch row := v.(type) {
	case nil:
	case *BatchResult:
		w.Batch = row
	case *csvChunkResult:
		w.CSV = row
	case []any:
		w.HasRow = true
		for _, x := range row {
			wv, werr := encodeValue(x)
			if werr != nil {
				return nil, werr
			}
			w.Row = append(w.Row, wv)
		}
	default:
		return nil, fmt.Errorf("engine: cannot encode result %T", v)
	}
	if err != nil {
		var de *Error
		if errors.As(err, &de) {
			w.Err = de
		} else {
			w.Internal = err.Error()
		}
	}
	return json.Marshal(w)
}

// DecodeResult decodes what EncodeResult produced.
func (e *Engine) DecodeResult(b []byte) (any, error) {
	var w wireResult
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, fmt.Errorf("engine: decode result: %w", err)
	}
	var err error
	switch {
	case w.Err != nil:
		err = w.Err
	case w.Internal != "":
		err = errors.New(w.Internal)
	}
	if w.Batch != nil {
		return w.Batch, err
	}
	if w.CSV != nil {
		return w.CSV, err
	}
	if !w.HasRow {
		return nil, err
	}
	row := make([]any, len(w.Row))
	for i, x := range w.Row {
		v, derr := decodeValue(x)
		if derr != nil {
			return nil, derr
		}
		row[i] = v
	}
	return row, err
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
