package engine

import (
	"encoding/json"
	"testing"
)

// TestRecordCreateJSON: a RecordCreate carried in a module's command is
// record.create's payload, and decodes back with numbers exact (a large
// integer that float64 would round stays what it was).
func TestRecordCreateJSON(t *testing.T) {
	in := RecordCreate{cmd: recordCreateCmd{Coll: "col_a", Ver: 3, Admin: true, ID: "abc", Now: 1700000000,
		Values: []any{int64(9007199254740993), "x", nil}, Actor: &Actor{ID: "adm", Type: "admin"}}}
	b, err := json.Marshal(struct {
		Create RecordCreate `json:"create"`
	}{in})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(in.cmd)
	if string(b) != `{"create":`+string(want)+`}` {
		t.Fatalf("encoded %s, want record.create's payload %s", b, want)
	}
	var out struct {
		Create RecordCreate `json:"create"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	n, ok := out.Create.cmd.Values[0].(json.Number)
	if !ok || n.String() != "9007199254740993" {
		t.Fatalf("value decodes as %#v, want the exact json.Number", out.Create.cmd.Values[0])
	}
	if out.Create.cmd.ID != "abc" || out.Create.cmd.Ver != 3 || out.Create.cmd.Actor == nil || out.Create.cmd.Actor.ID != "adm" {
		t.Fatalf("decoded %+v", out.Create.cmd)
	}
}
