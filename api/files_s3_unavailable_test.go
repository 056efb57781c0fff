package api_test

import (
	"bytes"
	"slices"
	"testing"

	"svcd/api/apitest"
)

// TestFilesS3Unavailable: when the S3 settings are wrong (the region left
// at its default "auto" on a server that checks it, a wrong secret, no
// credentials, a missing bucket, an endpoint nobody listens on), an
// upload answers 503 "File storage (s3) is not available" with
// Retry-After and records nothing, a download of a stored file answers
// 503 (404 from a bucket that does not hold it), its thumbnail too; with
// the settings fixed, everything works again and the bucket holds only
// acknowledged files.
func TestFilesS3Unavailable(t *testing.T) {
	t.Parallel()
	eachS3(t, testFilesS3Unavailable)
}

func testFilesS3Unavailable(t *testing.T, peer *s3Peer) {
	s := apitest.Start(t, apitest.Options{})
	x := newFilesFixture(t, s)
	peer.useS3(t, s)
	src := pngBytes(t, 20, 20)
	stored := apitest.Obj(t, apitest.List(t, uploadOK(t, s, "papers", x.rec, "many", x.ann, file("file", "a.png", src)))[0])["filename"].(string)
	cases := []struct {
		name     string
		settings map[string]any
		// signed: only a server that checks signatures refuses it.
		signed   bool
		download int
	}{
		{"region left at auto", map[string]any{"s3.region": ""}, true, 503},
		{"wrong secret", map[string]any{"s3.secret_access_key": "not-the-secret"}, true, 503},
		{"no credentials", map[string]any{"s3.access_key_id": "", "s3.secret_access_key": ""}, true, 503},
		{"missing bucket", map[string]any{"s3.bucket": "no-such-bucket"}, false, 404},
		{"nobody listening", map[string]any{"s3.endpoint": "http://127.0.0.1:1"}, false, 503},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.signed && !peer.checksSignatures {
				t.Skip("this server accepts any signature")
			}
			peer.useS3(t, s)
			s.MustAdmin(t, 200, "PATCH", settingsURL, c.settings)
			defer peer.useS3(t, s)
			res, out := sendForm(t, s, "POST", "/api/v1/files/papers/"+x.rec+"/many", x.ann, file("file", "b.txt", []byte("b")))
			if res.StatusCode != 503 || !bytes.Contains(out, []byte(`"File storage (s3) is not available"`)) || res.Header.Get("Retry-After") == "" {
				t.Errorf("upload: %d %s (Retry-After %q)", res.StatusCode, out, res.Header.Get("Retry-After"))
			}
			for _, q := range []string{"", "?thumb=10x10"} {
				if st, body, _ := download(t, s, fileURL(stored)+q, nil); st != c.download {
					t.Errorf("download%s: %d %.200s, want %d", q, st, body, c.download)
				}
			}
		})
	}
	if got := apitest.List(t, x.record(t, x.rec)["many"]); len(got) != 1 || got[0] != stored {
		t.Errorf("refused uploads changed the record: many = %v", got)
	}
	after := apitest.Obj(t, apitest.List(t, uploadOK(t, s, "papers", x.rec, "many", x.ann, file("file", "c.txt", []byte("c"))))[0])["filename"].(string)
	if st, body, _ := download(t, s, fileURL(stored)+"?thumb=10x10", nil); st != 200 || bytes.Equal(body, src) {
		t.Errorf("a thumbnail with the settings fixed: %d, %d bytes", st, len(body))
	}
	if got, want := peer.keys(t), sortedOf(stored, after); !slices.Equal(got, want) {
		t.Errorf("the bucket holds %v, want %v", got, want)
	}
}
