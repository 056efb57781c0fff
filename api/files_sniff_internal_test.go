package api

import "testing"

// TestSniffMIME: the type comes from the content; the name only tells
// text types apart.
func TestSniffMIME(t *testing.T) {
	avif := []byte("\x00\x00\x00\x1cftypavif\x00\x00\x00\x00avifmif1miaf")
	avifCompat := []byte("\x00\x00\x00\x20ftypmif1\x00\x00\x00\x00mif1avifmiafMA1B")
	heic := []byte("\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic")
	for _, c := range []struct {
		head []byte
		name string
		want string
	}{
		{[]byte("\x89PNG\r\n\x1a\n\x00\x00"), "x.txt", "image/png"},
		{[]byte("\xff\xd8\xff\xe0\x00\x10JFIF"), "x.png", "image/jpeg"},
		{[]byte("GIF89a\x01\x00"), "x", "image/gif"},
		{[]byte("RIFF\x00\x00\x00\x00WEBPVP8 "), "x", "image/webp"},
		{avif, "x.png", "image/avif"},
		{avifCompat, "x", "image/avif"},
		{heic, "x.heic", "application/octet-stream"}, // not a type SPEC.md lists
		{[]byte("%PDF-1.7\n"), "x.txt", "application/pdf"},
		{[]byte("<!DOCTYPE html><html>"), "x.png", "text/html"},
		{[]byte("<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\">"), "x.png", "image/svg+xml"},
		{[]byte("<svg onload=alert(1)>"), "x.txt", "image/svg+xml"},
		{[]byte("alert(1)"), "x.js", "text/javascript"},
		{[]byte("alert(1)"), "x.mjs", "text/javascript"},
		{[]byte("alert(1)"), "x.txt", "text/plain"},
		{[]byte("alert(1)"), "noext", "text/plain"},
		{[]byte("a,b\n1,2\n"), "t.csv", "text/csv"},
		{[]byte("<p>hi</p>"), "x.xhtml", "text/html"},
		{[]byte("hello"), "x.xhtml", "application/xhtml+xml"},
		{[]byte("MZ\x90\x00\x03\x00"), "x.png", "application/x-msdownload"},
		{[]byte{0, 1, 2, 3, 4, 5}, "x.bin", "application/octet-stream"},
		{nil, "empty.txt", "text/plain"},
	} {
		if got := sniffMIME(c.head, c.name); got != c.want {
			t.Errorf("sniffMIME(%q, %q) = %s, want %s", c.head, c.name, got, c.want)
		}
	}
}
