package api_test

import (
	"bytes"
	"image"
	_ "image/jpeg"
	_ "image/png"
	"testing"

	"svcd/api/apitest"
)

// TestFilesThumbnails: a download with thumb= is the node's thumbnail
// (engine/files/thumb, wired by the composition root), in the fit asked
// for; a malformed spec serves the original, and the thumbnail is served
// under the same rules as its file.
func TestFilesThumbnails(t *testing.T) {
	t.Parallel()
	testFilesThumbnails(t, apitest.Start(t, apitest.Options{}))
}

// testFilesThumbnails is the thumbnail scenario against s, whatever its
// storage driver.
func testFilesThumbnails(t *testing.T, s *apitest.Server) {
	x := newFilesFixture(t, s)
	src := pngBytes(t, 64, 48)
	up, _ := uploadOK(t, s, "papers", x.rec, "many", x.ann, file("file", "pic.png", src)).([]any)
	if len(up) != 1 {
		t.Fatalf("upload answered %v", up)
	}
	obj := apitest.Obj(t, up[0])
	name, _ := obj["filename"].(string)
	path := fileURL(name)
	if name == "" {
		t.Fatalf("upload answered %v", obj)
	}
	for _, c := range []struct {
		query, format string
		w, h          int
	}{
		{"?thumb=16x16", "png", 16, 12},       // contain: the whole image inside 16x16
		{"?thumb=16x16_cover", "png", 16, 16}, // cover: exactly 16x16
		{"?thumb=16x16&fit=crop", "png", 16, 16},
		{"?thumb=0x16", "png", 21, 16},        // PocketBase's 0xH: the width follows
		{"?thumb=0x0", "png", 64, 48},         // malformed: the original
		{"?thumb=16x16_weird", "png", 64, 48}, // malformed: the original
		{"?thumb=5000x9999", "png", 64, 48},   // clamped, and contain never enlarges
	} {
		code, body, res := download(t, s, path+c.query, nil)
		if code != 200 {
			t.Fatalf("%s: %d %s", c.query, code, body)
		}
		cfg, format, err := image.DecodeConfig(bytes.NewReader(body))
		if err != nil || format != c.format || cfg.Width != c.w || cfg.Height != c.h {
			t.Errorf("%s: %s %dx%d (%v), want %s %dx%d", c.query, format, cfg.Width, cfg.Height, err, c.format, c.w, c.h)
		}
		if ct := res.Header.Get("Content-Type"); ct != "image/png" {
			t.Errorf("%s: Content-Type %q", c.query, ct)
		}
	}
	// The thumbnail of a file nobody may see is not served either.
	code, body, _ := download(t, s, fileURL("00000000-0000-4000-8000-000000000000.png")+"?thumb=16x16", nil)
	if code != 404 {
		t.Errorf("thumbnail of a missing file: %d %s", code, body)
	}
}
