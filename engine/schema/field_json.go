package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

var _ FieldType = jsonType{}

// jsonType holds any JSON value, stored as its compact encoding (TEXT) and
// returned verbatim. null stores NULL. json.Number inputs keep their exact
// spelling. max_size caps the encoded size in bytes (0 = no cap).
type jsonType struct{}

func (jsonType) Name() string { return FieldJSON }

func (jsonType) Column(*Field) Column { return ColText }

func (jsonType) OptionKeys() []string { return []string{"max_size", "encrypted"} }

func (jsonType) CleanOptions(f *Field, _ Lookup) string {
	o := f.Options
	f.Options = Options{MaxSize: o.MaxSize, Encrypted: o.Encrypted}
	if o.MaxSize < 0 {
		return "max_size cannot be negative"
	}
	return ""
}

func (jsonType) Normalize(f *Field, in any) (any, string) {
	if in == nil {
		return nil, ""
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(in); err != nil {
		return nil, "must be a JSON value"
	}
	out := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	if f.MaxSize > 0 && int64(len(out)) > f.MaxSize {
		return nil, fmt.Sprintf("must be at most %d bytes when encoded", f.MaxSize)
	}
	return string(out), ""
}

// IsZero treats NULL, "" and the JSON values null, "", [] and {} as blank.
func (jsonType) IsZero(_ *Field, stored any) bool {
	s, ok := storedString(stored)
	if !ok {
		return stored == nil
	}
	switch string(bytes.TrimSpace([]byte(s))) {
	case "", "null", `""`, "[]", "{}":
		return true
	}
	return false
}

func (jsonType) AppendJSON(buf []byte, _ *Field, stored any) []byte {
	switch v := stored.(type) {
	case nil:
		return append(buf, "null"...)
	case int64:
		return strconv.AppendInt(buf, v, 10)
	case float64:
		return appendFloat(buf, v)
	case string, []byte:
		s, _ := storedString(v)
		if json.Valid([]byte(s)) {
			return append(buf, s...)
		}
		return appendString(buf, s) // not JSON: return it as a string
	}
	return append(buf, "null"...)
}
