package csv

import (
	"bytes"
	"encoding/json"
	"testing"
)

func sampleChunk(t testing.TB) importCmd {
	var c importCmd
	in := `{"coll":"col_x","ver":2,"rows":[
		{"row":2,"create":{"coll":"col_x","ver":2,"admin":true,"id":"aaaaabbbbbccccc","now":5,"values":["a",null,"é"],
			"env":{"now":5,"method":"POST","auth":{"id":"adm_1"}},"actor":{"id":"adm_1","type":"admin"}}},
		{"row":3,"create":{"coll":"col_x","ver":2,"id":"aaaaabbbbbddddd","now":5,"values":[]}}]}`
	if err := json.Unmarshal([]byte(in), &c); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestImportChunkBinaryRoundTrip(t *testing.T) {
	c := sampleChunk(t)
	b, err := c.AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	var back importCmd
	if err := back.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(c)
	got, _ := json.Marshal(back)
	if !bytes.Equal(want, got) {
		t.Fatalf("round trip:\n got %s\nwant %s", got, want)
	}
	for n := 0; n < len(b); n++ {
		if err := new(importCmd).UnmarshalBinary(b[:n]); err == nil {
			t.Fatalf("a chunk cut to %d of %d bytes decoded", n, len(b))
		}
	}
}

// FuzzImportChunkBinary: any bytes decode or fail, never panic; what
// decodes encodes back to bytes that decode the same.
func FuzzImportChunkBinary(f *testing.F) {
	seed, err := sampleChunk(f).AppendBinary(nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Fuzz(func(t *testing.T, b []byte) {
		var c importCmd
		if c.UnmarshalBinary(b) != nil {
			return
		}
		again, err := c.AppendBinary(nil)
		if err != nil {
			return // a value only JSON carries
		}
		var c2 importCmd
		if err := c2.UnmarshalBinary(again); err != nil {
			t.Fatal(err)
		}
		j1, _ := json.Marshal(c)
		j2, _ := json.Marshal(c2)
		if !bytes.Equal(j1, j2) {
			t.Fatalf("round trip differs:\n%s\n%s", j1, j2)
		}
	})
}
