package fsm_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"strings"
	"testing"

	"svcd/fsm"
)

func TestCommandEncodeLayout(t *testing.T) {
	c := fsm.Command{Type: 0x0102, Version: 3, Flags: fsm.FlagIgnoreUnknown, Payload: []byte("hi")}
	want := []byte{0xC2, 0x01, 0x02, 0x03, 0x01, 0, 0, 0, 0, 'h', 'i'}
	sum := crc32.Checksum(append([]byte{0x01, 0x02, 0x03, 0x01}, "hi"...), crc32.MakeTable(crc32.Castagnoli))
	binary.BigEndian.PutUint32(want[5:9], sum)
	if got := c.Encode(); !bytes.Equal(got, want) {
		t.Fatalf("Encode = % x, want % x", got, want)
	}
}

// TestDecodeVersion1: entries written before checksums still decode.
func TestDecodeVersion1(t *testing.T) {
	c, err := fsm.Decode([]byte{0xC1, 0x01, 0x02, 0x03, 0x01, 'h', 'i'})
	if err != nil || c.Type != 0x0102 || c.Version != 3 || c.Flags != fsm.FlagIgnoreUnknown || string(c.Payload) != "hi" {
		t.Fatalf("Decode(v1) = %+v, %v", c, err)
	}
}

// TestDecodeRefusesEveryChangedByte: a version 2 envelope with any single
// byte changed (any bit of it) is refused, never decoded into another
// command.
func TestDecodeRefusesEveryChangedByte(t *testing.T) {
	b := fsm.Command{Type: 20, Version: 1, Payload: []byte(`{"coll":"col_x","values":["hello world",42]}`)}.Encode()
	for i := range b {
		for bit := range 8 {
			c := bytes.Clone(b)
			c[i] ^= 1 << bit
			got, err := fsm.Decode(c)
			if err == nil {
				t.Fatalf("byte %d bit %d flipped: decoded %+v", i, bit, got)
			}
			if i > 0 && !errors.Is(err, fsm.ErrChecksum) || i == 0 && !errors.Is(err, fsm.ErrBadEnvelope) {
				t.Fatalf("byte %d bit %d flipped: %v, want ErrChecksum", i, bit, err)
			}
		}
	}
}

func TestEncodeCopiesPayload(t *testing.T) {
	p := []byte("original")
	b := fsm.Command{Type: 1, Payload: p}.Encode()
	copy(p, "XXXXXXXX")
	c, err := fsm.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if string(c.Payload) != "original" {
		t.Fatalf("encoding aliases the payload: %q", c.Payload)
	}
}

func TestDecodePayloadAliasesInput(t *testing.T) {
	b := fsm.Command{Type: 1, Payload: []byte("abc")}.Encode()
	c, err := fsm.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	b[9] = 'z'
	if string(c.Payload) != "zbc" {
		t.Fatalf("payload %q does not alias the input as documented", c.Payload)
	}
}

func TestDecodeRejects(t *testing.T) {
	valid := fsm.Command{Type: 1, Version: 1, Payload: []byte("p")}.Encode()
	tests := []struct {
		name string
		in   []byte
	}{
		{"nil", nil},
		{"empty", []byte{}},
		{"magic only", []byte{0xC1}},
		{"2 bytes", []byte{0xC1, 0}},
		{"4 bytes", []byte{0xC1, 0, 1, 1}},
		{"zero magic", []byte{0x00, 0, 1, 1, 0}},
		{"previous magic", []byte{0xC0, 0, 1, 1, 0, 'x'}},
		{"next magic", []byte{0xC3, 0, 1, 1, 0, 0, 0, 0, 0}},
		{"version 2, 8 bytes", []byte{0xC2, 0, 1, 1, 0, 0, 0, 0}},
		{"json instead of envelope", []byte(`{"type":1}`)},
		{"valid with first byte flipped", append([]byte{valid[0] ^ 0x80}, valid[1:]...)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := fsm.Decode(tc.in)
			if !errors.Is(err, fsm.ErrBadEnvelope) {
				t.Fatalf("Decode(% x) err = %v, want ErrBadEnvelope", tc.in, err)
			}
			if c.Type != 0 || c.Version != 0 || c.Flags != 0 || c.Payload != nil {
				t.Fatalf("Decode returned a non-zero command with an error: %+v", c)
			}
		})
	}
}

// FuzzDecode: any bytes decode to a command only as a well-formed version
// 1 envelope, or a version 2 envelope whose checksum holds; never a
// panic; a refusal wraps ErrBadEnvelope or ErrChecksum.
func FuzzDecode(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0xC1})
	f.Add([]byte{0xC1, 0, 0, 0, 0})
	f.Add([]byte{0xC0, 0, 1, 1, 0, 'x'})
	f.Add([]byte{0xC2, 0, 1, 1, 0, 0, 0, 0, 0})
	f.Add(fsm.Command{Type: 1, Version: 1, Payload: []byte(`{"k":"a"}`)}.Encode())
	f.Add(fsm.Command{Type: 0xFFFF, Version: 0xFF, Flags: 0xFF, Payload: []byte{0xC1}}.Encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		in := bytes.Clone(b)
		c, err := fsm.Decode(b)
		if !bytes.Equal(b, in) {
			t.Fatalf("Decode modified its input")
		}
		v1 := len(b) >= 5 && b[0] == 0xC1
		v2 := len(b) >= 9 && b[0] == 0xC2 &&
			binary.BigEndian.Uint32(b[5:9]) == crc32.Update(crc32.Checksum(b[1:5], crc32.MakeTable(crc32.Castagnoli)), crc32.MakeTable(crc32.Castagnoli), b[9:])
		if err != nil {
			if v1 || v2 {
				t.Fatalf("Decode(% x) rejected a well-formed envelope: %v", b, err)
			}
			if !errors.Is(err, fsm.ErrBadEnvelope) && !errors.Is(err, fsm.ErrChecksum) || !strings.Contains(err.Error(), "bytes") {
				t.Fatalf("Decode error %v wraps neither ErrBadEnvelope nor ErrChecksum", err)
			}
			return
		}
		if !v1 && !v2 {
			t.Fatalf("Decode(% x) accepted a malformed envelope: %+v", b, c)
		}
		if c.Type != fsm.Type(binary.BigEndian.Uint16(b[1:3])) || c.Version != b[3] || c.Flags != fsm.Flags(b[4]) {
			t.Fatalf("header mismatch: %+v from % x", c, b[:5])
		}
		if v2 {
			if got := c.Encode(); !bytes.Equal(got, b) {
				t.Fatalf("Encode(Decode(b)) = % x, want % x", got, b)
			}
		}
	})
}
