package engine

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// Command payloads come in two forms. Version 1 is JSON (every command
// can be proposed as JSON). Version 2 is a compact binary form for the
// payloads that carry many records (batches of creates, CSV import
// chunks): encoding and decoding JSON was a fifth of a bulk write's CPU
// (docs/benchmarks.md). A payload type opts in by implementing
// encoding.BinaryAppender (Propose) and encoding.BinaryUnmarshaler
// (decodeCmd); when AppendBinary reports ErrNoBinary the command goes as
// JSON instead, so the binary form only has to cover the common shapes.
// A node older than the binary form halts on a version 2 entry (it cannot
// decode it), so a rolling upgrade upgrades the leader last.
const (
	cmdVersionJSON   uint8 = 1
	cmdVersionBinary uint8 = 2
)

// ErrNoBinary tells Propose to send a payload as JSON: the binary form
// does not cover it. A module's AppendBinary returns (or wraps) it too.
var ErrNoBinary = errors.New("engine: payload has no binary form")

// binWriter appends the primitives of the binary payloads. keys is
// scratch space for sorting map keys (a stack: nested maps push above
// their parent's keys), so encoding a record allocates nothing for it.
type binWriter struct {
	b    []byte
	keys []string
}

func (w *binWriter) uvarint(v uint64) { w.b = binary.AppendUvarint(w.b, v) }
func (w *binWriter) varint(v int64)   { w.b = binary.AppendVarint(w.b, v) }
func (w *binWriter) u8(c byte)        { w.b = append(w.b, c) }

func (w *binWriter) str(s string) {
	w.uvarint(uint64(len(s)))
	w.b = append(w.b, s...)
}

func (w *binWriter) bytes(p []byte) {
	w.uvarint(uint64(len(p)))
	w.b = append(w.b, p...)
}

// Tags of encoded values.
const (
	tagNil byte = iota
	tagFalse
	tagTrue
	tagInt    // varint
	tagFloat  // 8 bytes, IEEE 754 bits, big endian
	tagString // uvarint length, bytes
	tagBytes  // uvarint length, bytes
	tagNumber // a JSON number's text, decoded as json.Number
	tagArray  // uvarint count, values
	tagMap    // uvarint count, (key, value) sorted by key
)

// storedValue appends a stored value of a record field: nil, int64,
// float64, string or []byte (what field normalization produces).
func (w *binWriter) storedValue(v any) error {
	switch x := v.(type) {
	case nil:
		w.u8(tagNil)
	case int64:
		w.u8(tagInt)
		w.varint(x)
	case float64:
		w.u8(tagFloat)
		w.b = binary.BigEndian.AppendUint64(w.b, math.Float64bits(x))
	case string:
		w.u8(tagString)
		w.str(x)
	case []byte:
		w.u8(tagBytes)
		w.bytes(x)
	default:
		return fmt.Errorf("%w: stored value %T", ErrNoBinary, v)
	}
	return nil
}

// jsonValue appends a value of a rule environment (a request body, the
// caller's fields) as a JSON round trip would leave it: numbers of any Go
// type become the text JSON would write, decoded as json.Number, so the
// binary form gives rules exactly what the JSON form gave them.
func (w *binWriter) jsonValue(v any) error {
	switch x := v.(type) {
	case nil:
		w.u8(tagNil)
	case bool:
		if x {
			w.u8(tagTrue)
		} else {
			w.u8(tagFalse)
		}
	case string:
		w.u8(tagString)
		w.str(x)
	case json.Number:
		w.u8(tagNumber)
		w.str(string(x))
	case int64:
		w.u8(tagNumber)
		w.str(strconv.FormatInt(x, 10))
	case int:
		w.u8(tagNumber)
		w.str(strconv.Itoa(x))
	case float64:
		text, err := json.Marshal(x)
		if err != nil {
			return fmt.Errorf("%w: %v", ErrNoBinary, err)
		}
		w.u8(tagNumber)
		w.str(string(text))
	case []any:
		w.u8(tagArray)
		w.uvarint(uint64(len(x)))
		for _, e := range x {
			if err := w.jsonValue(e); err != nil {
				return err
			}
		}
	case map[string]any:
		w.u8(tagMap)
		return w.anyMap(x)
	default:
		return fmt.Errorf("%w: value %T", ErrNoBinary, v)
	}
	return nil
}

// anyMap appends a map's size and its entries sorted by key (the same map
// always encodes to the same bytes).
func (w *binWriter) anyMap(m map[string]any) error { return writeMap(w, m, w.jsonValue) }

func (w *binWriter) strMap(m map[string]string) {
	writeMap(w, m, func(v string) error { w.str(v); return nil })
}

func writeMap[V any](w *binWriter, m map[string]V, value func(V) error) error {
	w.uvarint(uint64(len(m)))
	start := len(w.keys)
	for k := range m {
		w.keys = append(w.keys, k)
	}
	slices.Sort(w.keys[start:])
	defer func() { w.keys = w.keys[:start] }()
	for i := start; i < start+len(m); i++ {
		k := w.keys[i] // w.keys may grow under value: index it each time
		w.str(k)
		if err := value(m[k]); err != nil {
			return err
		}
	}
	return nil
}

// binReader reads what binWriter wrote. The first error sticks: later
// reads return zero values, and err reports it once at the end.
type binReader struct {
	b   []byte
	err error
}

// errBinary marks a malformed binary payload.
var errBinary = errors.New("malformed binary payload")

func (r *binReader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s", errBinary, what)
	}
}

func (r *binReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail("bad unsigned varint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *binReader) varint() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail("bad varint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *binReader) u8() byte {
	if r.err != nil {
		return 0
	}
	if len(r.b) == 0 {
		r.fail("truncated")
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

// count reads a length that must fit in what is left (each element takes
// at least min bytes), so a corrupt length cannot ask for a huge slice.
func (r *binReader) count(min int) int {
	n := r.uvarint()
	if n > uint64(len(r.b)/max(min, 1)) {
		r.fail("length past the end")
		return 0
	}
	return int(n)
}

func (r *binReader) raw() []byte {
	n := r.count(1)
	if r.err != nil {
		return nil
	}
	p := r.b[:n:n]
	r.b = r.b[n:]
	return p
}

func (r *binReader) str() string { return string(r.raw()) }

// value reads one tagged value; tagBytes copies (the payload's buffer is
// the log entry's).
func (r *binReader) value() any {
	switch tag := r.u8(); tag {
	case tagNil:
		return nil
	case tagFalse:
		return false
	case tagTrue:
		return true
	case tagInt:
		return r.varint()
	case tagFloat:
		if len(r.b) < 8 {
			r.fail("truncated float")
			return nil
		}
		f := math.Float64frombits(binary.BigEndian.Uint64(r.b))
		r.b = r.b[8:]
		return f
	case tagString:
		return r.str()
	case tagBytes:
		return slices.Clone(r.raw())
	case tagNumber:
		return json.Number(r.str())
	case tagArray:
		n := r.count(1)
		out := make([]any, n)
		for i := range out {
			out[i] = r.value()
		}
		return out
	case tagMap:
		return r.anyMap()
	default:
		r.fail(fmt.Sprintf("unknown value tag %d", tag))
		return nil
	}
}

// anyMap reads a map of values; an empty one reads as nil, as JSON's
// omitempty leaves it.
func (r *binReader) anyMap() map[string]any { return readMap(r, r.value) }

// strMap reads a map of strings, nil when empty.
func (r *binReader) strMap() map[string]string { return readMap(r, r.str) }

func readMap[V any](r *binReader, value func() V) map[string]V {
	n := r.count(2)
	if n == 0 {
		return nil
	}
	m := make(map[string]V, n)
	for range n {
		k := r.str()
		m[k] = value()
	}
	return m
}

// done reports the first error, or trailing bytes.
func (r *binReader) done() error {
	if r.err == nil && len(r.b) != 0 {
		r.fail(fmt.Sprintf("%d trailing bytes", len(r.b)))
	}
	return r.err
}
