package fsm_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"svcd/fsm"
)

func TestCommandEncodeLayout(t *testing.T) {
	c := fsm.Command{Type: 0x0102, Version: 3, Flags: fsm.FlagIgnoreUnknown, Payload: []byte("hi")}
	want := []byte{0xC1, 0x01, 0x02, 0x03, 0x01, 'h', 'i'}
	if got := c.Encode(); !bytes.Equal(got, want) {
		t.Fatalf("Encode = % x, want % x", got, want)
	}
}

func TestCommandRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		cmd  fsm.Command
	}{
		{"zero command", fsm.Command{}},
		{"nil payload", fsm.Command{Type: 7, Version: 1}},
		{"empty payload", fsm.Command{Type: 7, Version: 1, Payload: []byte{}}},
		{"json payload", fsm.Command{Type: 1, Version: 2, Payload: []byte(`{"k":"a","v":"b"}`)}},
		{"ignore-unknown flag", fsm.Command{Type: 300, Version: 9, Flags: fsm.FlagIgnoreUnknown, Payload: []byte("x")}},
		{"all flag bits", fsm.Command{Type: 42, Flags: 0xFF, Payload: []byte{0}}},
		{"max type and version", fsm.Command{Type: 0xFFFF, Version: 0xFF, Payload: []byte{0xC1, 0xC1}}},
		{"binary payload", fsm.Command{Type: 0x8000, Version: 128, Payload: []byte{0, 1, 2, 0xFF, 0xFE}}},
		{"large payload", fsm.Command{Type: 5, Version: 1, Payload: bytes.Repeat([]byte("abcdefgh"), 8192)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.cmd.Encode()
			if len(b) != 5+len(tc.cmd.Payload) {
				t.Fatalf("encoded length %d, want %d", len(b), 5+len(tc.cmd.Payload))
			}
			got, err := fsm.Decode(b)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if got.Type != tc.cmd.Type || got.Version != tc.cmd.Version || got.Flags != tc.cmd.Flags {
				t.Fatalf("header = {%d %d %d}, want {%d %d %d}",
					got.Type, got.Version, got.Flags, tc.cmd.Type, tc.cmd.Version, tc.cmd.Flags)
			}
			if !bytes.Equal(got.Payload, tc.cmd.Payload) {
				t.Fatalf("payload %q, want %q", got.Payload, tc.cmd.Payload)
			}
			if again := got.Encode(); !bytes.Equal(again, b) {
				t.Fatalf("re-encode = % x, want % x", again, b)
			}
		})
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
	b[5] = 'z'
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
		{"next magic", []byte{0xC2, 0, 1, 1, 0}},
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

func FuzzDecode(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0xC1})
	f.Add([]byte{0xC1, 0, 0, 0, 0})
	f.Add([]byte{0xC0, 0, 1, 1, 0, 'x'})
	f.Add(fsm.Command{Type: 1, Version: 1, Payload: []byte(`{"k":"a"}`)}.Encode())
	f.Add(fsm.Command{Type: 0xFFFF, Version: 0xFF, Flags: 0xFF, Payload: []byte{0xC1}}.Encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		in := bytes.Clone(b)
		c, err := fsm.Decode(b)
		if !bytes.Equal(b, in) {
			t.Fatalf("Decode modified its input")
		}
		valid := len(b) >= 5 && b[0] == 0xC1
		if err != nil {
			if valid {
				t.Fatalf("Decode(% x) rejected a well-formed envelope: %v", b, err)
			}
			if !errors.Is(err, fsm.ErrBadEnvelope) || !strings.Contains(err.Error(), "bytes") {
				t.Fatalf("Decode error %v does not wrap ErrBadEnvelope", err)
			}
			return
		}
		if !valid {
			t.Fatalf("Decode(% x) accepted a malformed envelope: %+v", b, c)
		}
		if c.Type != fsm.Type(binary.BigEndian.Uint16(b[1:3])) || c.Version != b[3] || c.Flags != fsm.Flags(b[4]) {
			t.Fatalf("header mismatch: %+v from % x", c, b[:5])
		}
		if got := c.Encode(); !bytes.Equal(got, b) {
			t.Fatalf("Encode(Decode(b)) = % x, want % x", got, b)
		}
	})
}
