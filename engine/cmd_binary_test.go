package engine

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"testing"

	"svcd/engine/schema"
	"svcd/fsm"
)

// sampleBatch is a batch of creates with every kind of stored value and a
// rule environment holding every kind of request value.
func sampleBatch() batchCmd {
	env := &RuleEnv{Now: 1764150000, Method: "POST", Context: "default",
		Auth:    map[string]any{"id": "u1", "collectionName": "users", "verified": true, "n": int64(7)},
		Headers: map[string]string{"x-a": "1", "x-b": ""},
		Query:   map[string]string{"q": "v"},
		Body: map[string]any{"title": "héllo", "n": json.Number("12.50"), "f": 0.1, "i": 3, "big": 1e21, "none": nil,
			"list": []any{json.Number("1"), "two", false, map[string]any{"k": []any{}}}, "obj": map[string]any{"a": true}},
	}
	values := []any{nil, int64(-42), 3.25, "text", []byte{0, 1, 2, 255}, 5.0, 1e300, int64(math.MaxInt64)}
	c := batchCmd{ReadBudget: 12345}
	c.Ops = append(c.Ops,
		batchOpCmd{Create: &recordCreateCmd{Coll: "col_abc", Ver: 3, Admin: true, ID: "aaaaabbbbbccccc", Now: 1764150000, Values: values, Env: env, Actor: &Actor{ID: "adm_x", Type: "admin"}}},
		batchOpCmd{Create: &recordCreateCmd{Coll: "col_abc", Ver: 3, ID: "aaaaabbbbbddddd", Now: -1, Values: []any{}}},
	)
	// Two more entries with the same collection, environment and actor
	// (equal values, not the same pointers): the second repeats the first.
	for _, id := range []string{"aaaaabbbbbeeeee", "aaaaabbbbbfffff"} {
		envCopy := *env
		c.Ops = append(c.Ops, batchOpCmd{Create: &recordCreateCmd{Coll: "col_abc", Ver: 3, ID: id, Now: 5, Values: []any{"x"},
			Env: &envCopy, Actor: &Actor{ID: "adm_x", Type: "admin"}}})
	}
	c.Ops = append(c.Ops, batchOpCmd{Create: &recordCreateCmd{Coll: "col_other", Ver: 1, ID: "aaaaabbbbbggggg", Now: 5, Values: []any{"y"},
		Env: &RuleEnv{Now: 6}, Actor: &Actor{Type: "anonymous"}}})
	return c
}

// columnsOf are the columns the sample values would be stored in (a float
// in an integer column is what JSON numbers without a fraction become).
var sampleColumns = []schema.Column{schema.ColText, schema.ColInteger, schema.ColReal, schema.ColText, schema.ColBlob,
	schema.ColInteger, schema.ColReal, schema.ColInteger}

func TestBinaryBatchStoresWhatJSONStores(t *testing.T) {
	c := sampleBatch()
	bin, err := encodeCmd(cmdBatch, c)
	if err != nil || bin.Version != cmdVersionBinary {
		t.Fatalf("encode: version %d, %v", bin.Version, err)
	}
	js, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if len(bin.Payload) >= len(js)/2 {
		t.Errorf("binary payload %d bytes, JSON %d", len(bin.Payload), len(js))
	}
	fromBin, err := decodeCmd[batchCmd](bin)
	if err != nil {
		t.Fatal(err)
	}
	fromJSON, err := decodeCmd[batchCmd](fsm.Command{Type: cmdBatch, Version: cmdVersionJSON, Payload: js})
	if err != nil {
		t.Fatal(err)
	}
	if fromBin.ReadBudget != fromJSON.ReadBudget || len(fromBin.Ops) != len(fromJSON.Ops) {
		t.Fatalf("binary %+v, JSON %+v", fromBin, fromJSON)
	}
	for i := range fromBin.Ops {
		b, j := fromBin.Ops[i].Create, fromJSON.Ops[i].Create
		if b == nil || j == nil {
			t.Fatalf("op %d: binary %+v, JSON %+v", i, fromBin.Ops[i], fromJSON.Ops[i])
		}
		if b.Coll != j.Coll || b.Ver != j.Ver || b.Admin != j.Admin || b.ID != j.ID || b.Now != j.Now ||
			!reflect.DeepEqual(b.Actor, j.Actor) || !reflect.DeepEqual(b.Env, j.Env) {
			t.Errorf("op %d differs:\nbinary %+v env %+v\nJSON   %+v env %+v", i, b, b.Env, j, j.Env)
		}
		if len(b.Values) != len(j.Values) {
			t.Fatalf("op %d: %d values, JSON %d", i, len(b.Values), len(j.Values))
		}
		if i > 0 { // text values only: decoded alike
			if !reflect.DeepEqual(b.Values, j.Values) {
				t.Errorf("op %d values: binary %#v, JSON %#v", i, b.Values, j.Values)
			}
			continue
		}
		for k := range b.Values {
			sb, errB := storedFromCommand(sampleColumns[k], b.Values[k])
			sj, errJ := storedFromCommand(sampleColumns[k], j.Values[k])
			if errB != nil || errJ != nil || !reflect.DeepEqual(sb, sj) {
				t.Errorf("op %d value %d: binary stores %#v (%v), JSON %#v (%v)", i, k, sb, errB, sj, errJ)
			}
		}
	}
}

func TestBinaryFloatInIntegerColumnMatchesJSON(t *testing.T) {
	for _, f := range []float64{0, math.Copysign(0, -1), 1, -1, 5.5, 1e15, 1e20, 1e21, -1e21, 9.2e18, 9.3e18, -9223372036854775808,
		9223372036854775807, math.SmallestNonzeroFloat64, 123456789.000001} {
		text, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		viaJSON, errJ := storedFromCommand(schema.ColInteger, json.Number(text))
		viaBin, errB := storedFromCommand(schema.ColInteger, f)
		if errJ != nil || errB != nil || !reflect.DeepEqual(viaJSON, viaBin) {
			t.Errorf("%v: JSON %#v (%v), binary %#v (%v)", f, viaJSON, errJ, viaBin, errB)
		}
	}
}

func TestBatchWithOtherEntriesGoesAsJSON(t *testing.T) {
	c := sampleBatch()
	c.Ops = append(c.Ops, batchOpCmd{Delete: &recordDeleteCmd{Coll: "col_abc", Ver: 3, ID: "x"}})
	cmd, err := encodeCmd(cmdBatch, c)
	if err != nil || cmd.Version != cmdVersionJSON {
		t.Fatalf("version %d, %v", cmd.Version, err)
	}
	// A value the binary form does not cover sends the batch as JSON too.
	c = sampleBatch()
	c.Ops[0].Create.Env.Auth["odd"] = []string{"x"}
	if cmd, err = encodeCmd(cmdBatch, c); err != nil || cmd.Version != cmdVersionJSON {
		t.Fatalf("uncovered value: version %d, %v", cmd.Version, err)
	}
	if _, err := decodeCmd[batchCmd](cmd); err != nil {
		t.Fatal(err)
	}
}

func TestBinaryPayloadOfAJSONOnlyTypeHalts(t *testing.T) {
	_, err := decodeCmd[recordDeleteCmd](fsm.Command{Version: cmdVersionBinary, Payload: []byte{1, 2}})
	if !errors.Is(err, fsm.ErrHalt) {
		t.Fatalf("err = %v, want a halt", err)
	}
}

// FuzzBatchBinary: any bytes either decode or fail with a halt, never
// panic, and what decodes encodes back to a payload that decodes the same.
func FuzzBatchBinary(f *testing.F) {
	seed, err := sampleBatch().AppendBinary(nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add(seed[:len(seed)/2])
	f.Add([]byte{0, 1, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := decodeCmd[batchCmd](fsm.Command{Type: cmdBatch, Version: cmdVersionBinary, Payload: b})
		if err != nil {
			if !errors.Is(err, fsm.ErrHalt) {
				t.Fatalf("error %v is not a halt", err)
			}
			return
		}
		again, err := c.AppendBinary(nil)
		if err != nil {
			// A decoded entry may hold a value only JSON carries
			// (a bool stored value): the proposer would send JSON.
			if errors.Is(err, ErrNoBinary) {
				return
			}
			t.Fatal(err)
		}
		c2, err := decodeCmd[batchCmd](fsm.Command{Type: cmdBatch, Version: cmdVersionBinary, Payload: again})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(c, c2) {
			t.Fatalf("round trip differs:\n%+v\n%+v", c, c2)
		}
	})
}

func TestSingleCreateGoesBinary(t *testing.T) {
	c := *sampleBatch().Ops[0].Create
	cmd, err := encodeCmd(cmdRecordCreate, c)
	if err != nil || cmd.Version != cmdVersionBinary {
		t.Fatalf("version %d, %v", cmd.Version, err)
	}
	back, err := decodeCmd[recordCreateCmd](cmd)
	if err != nil {
		t.Fatal(err)
	}
	if back.ID != c.ID || back.Coll != c.Coll || !reflect.DeepEqual(back.Env, c.Env.jsonRoundTrip(t)) || len(back.Values) != len(c.Values) {
		t.Fatalf("decoded %+v", back)
	}
}

// jsonRoundTrip is the environment as a JSON command would carry it.
func (r *RuleEnv) jsonRoundTrip(t *testing.T) *RuleEnv {
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	out, err := decodeCmd[RuleEnv](fsm.Command{Version: cmdVersionJSON, Payload: b})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
