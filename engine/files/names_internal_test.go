package files

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCleanNameAndExtension(t *testing.T) {
	for _, c := range []struct{ in, name, ext, mime string }{
		{"photo.PNG", "photo.PNG", "png", "image/png"},
		{"../../etc/passwd", "passwd", "txt", "text/plain"},
		{`C:\Users\ann\report.pdf`, "report.pdf", "pdf", "application/pdf"},
		{"a\x00b\r\n\"c\".txt", "abc.txt", "txt", "text/plain"},
		{"", "file", "png", "image/png"},
		{"noext", "noext", "bin", "application/x-unknown-thing"},
		{"weird.ext-with-dash", "weird.ext-with-dash", "pdf", "application/pdf"},
	} {
		name := cleanName(c.in)
		if len(name) > 255 || (c.name != "" && !strings.HasPrefix(name, c.name[:min(len(c.name), 20)])) {
			t.Errorf("cleanName(%q) = %q", c.in, name)
		}
		if got := extension(name, c.mime); got != c.ext {
			t.Errorf("extension(%q, %s) = %q, want %q", name, c.mime, got, c.ext)
		}
	}
}

func TestCleanNameKeepsUTF8(t *testing.T) {
	long := cleanName(strings.Repeat("é", 200) + ".txt")
	if len(long) > 255 || !utf8.ValidString(long) {
		t.Errorf("a long name: %d bytes, valid UTF-8 %v", len(long), utf8.ValidString(long))
	}
}

func TestApplyFieldChange(t *testing.T) {
	cur := []string{"a", "b", "c"}
	for _, c := range []struct {
		ch   fieldChange
		want []string
	}{
		{fieldChange{Add: []string{"d"}}, []string{"a", "b", "c", "d"}},
		{fieldChange{Clear: true, Add: []string{"d"}}, []string{"d"}},
		{fieldChange{Remove: []string{"b"}}, []string{"a", "c"}},
		{fieldChange{Remove: []string{"a", "c"}, Add: []string{"e"}}, []string{"b", "e"}},
	} {
		if got := applyFieldChange(slices.Clone(cur), c.ch); !slices.Equal(got, c.want) {
			t.Errorf("%+v: %v, want %v", c.ch, got, c.want)
		}
	}
	if got := storedNames(storedValue(true, []string{"x.png", "y.txt"})); !slices.Equal(got, []string{"x.png", "y.txt"}) {
		t.Errorf("round trip of a multiple value: %v", got)
	}
	if storedValue(false, nil) != nil || storedValue(true, nil) != nil || storedNames(nil) != nil {
		t.Errorf("empty values are not null")
	}
}

func TestMimeAllowed(t *testing.T) {
	list := []string{"image/*", "application/pdf"}
	for mime, want := range map[string]bool{"image/png": true, "image/svg+xml": true, "application/pdf": true, "text/plain": false, "imagex/png": false} {
		if mimeAllowed(list, mime) != want {
			t.Errorf("%s: %v", mime, !want)
		}
	}
}

// TestLimitedHash: the limit is exact (max bytes pass, max+1 fail), and the
// digest covers what passed.
func TestLimitedHash(t *testing.T) {
	data := bytes.Repeat([]byte("z"), 1000)
	l := &limitedHash{r: bytes.NewReader(data), max: 1000, h: sha256.New()}
	if n, err := io.Copy(io.Discard, l); err != nil || n != 1000 || l.over {
		t.Fatalf("at the limit: %d, %v", n, err)
	}
	if sum := sha256.Sum256(data); !bytes.Equal(l.h.Sum(nil), sum[:]) {
		t.Errorf("digest differs")
	}
	l = &limitedHash{r: bytes.NewReader(append(data, 'z')), max: 1000, h: sha256.New()}
	if _, err := io.Copy(io.Discard, l); !errors.Is(err, errTooLarge) || !l.over {
		t.Errorf("one byte over: %v", err)
	}
}
