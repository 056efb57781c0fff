package frame_test

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"svcd/cluster/frame"
)

// TestRoundTrip: frames read back as written, one after another; a frame
// longer than the limit is refused by its header; a cut frame is an
// unexpected EOF.
func TestRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	for _, s := range []string{"", "{}", strings.Repeat("x", 70000)} {
		if err := frame.Write(&buf, []byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []string{"", "{}", strings.Repeat("x", 70000)} {
		got, err := frame.Read(&buf, 1<<20)
		if err != nil || string(got) != want {
			t.Fatalf("read %d bytes, %v; want %d", len(got), err, len(want))
		}
	}
	if _, err := frame.Read(&buf, 1<<20); err != io.EOF {
		t.Fatalf("past the last frame: %v", err)
	}
	frame.Write(&buf, []byte("0123456789"))
	if _, err := frame.Read(&buf, 9); err == nil || !strings.Contains(err.Error(), "frame of 10 bytes") {
		t.Fatalf("over the limit: %v", err)
	}
	buf.Reset()
	frame.Write(&buf, []byte("0123456789"))
	buf.Truncate(8)
	if _, err := frame.Read(&buf, 100); err != io.ErrUnexpectedEOF {
		t.Fatalf("a cut frame: %v", err)
	}
}
