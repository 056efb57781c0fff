package api_test

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"testing"

	"svcd/api/apitest"
)

// formPart is one part of a multipart body: a file when fileName is set,
// else a plain value.
type formPart struct {
	name, fileName string
	content        []byte
	// contentType is what the client claims (never trusted).
	contentType string
}

// file is a file part named field.
func file(field, name string, content []byte) formPart {
	return formPart{name: field, fileName: name, content: content, contentType: "application/octet-stream"}
}

// value is a plain form value.
func value(name, v string) formPart { return formPart{name: name, content: []byte(v)} }

// multipartBody encodes parts; it returns the body and its Content-Type.
func multipartBody(t testing.TB, parts ...formPart) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		if p.fileName != "" {
			h.Set("Content-Disposition", `form-data; name="`+p.name+`"; filename="`+p.fileName+`"`)
			h.Set("Content-Type", p.contentType)
		} else {
			h.Set("Content-Disposition", `form-data; name="`+p.name+`"`)
		}
		pw, err := w.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		pw.Write(p.content)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), w.FormDataContentType()
}

// sendForm sends a multipart request with headers and returns the
// response and body.
func sendForm(t testing.TB, s *apitest.Server, method, path string, headers map[string]string, parts ...formPart) (*http.Response, []byte) {
	t.Helper()
	body, ct := multipartBody(t, parts...)
	h := map[string]string{"Content-Type": ct}
	for k, v := range headers {
		h[k] = v
	}
	res, out := s.Do(t, method, path, body, h)
	apitest.CheckCommon(t, res, out)
	return res, out
}

// uploadOK uploads parts to field of record id of coll as headers' caller
// and returns the data member (an object, or an array on a multiple
// field).
func uploadOK(t testing.TB, s *apitest.Server, coll, id, field string, headers map[string]string, parts ...formPart) any {
	t.Helper()
	res, out := sendForm(t, s, http.MethodPost, "/api/v1/files/"+coll+"/"+id+"/"+field, headers, parts...)
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("upload to %s/%s/%s: %d %s", coll, id, field, res.StatusCode, out)
	}
	return apitest.DecodeMap(t, out)["data"]
}

// pngBytes is a valid w x h PNG.
func pngBytes(t testing.TB, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		for y := range h {
			v := uint8(x*31 + y*17 + x*y*7) // little that compresses
			img.Set(x, y, color.RGBA{v, v ^ 0x5a, uint8(x ^ y), 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// pdfBytes is the start of a PDF document (sniffed as application/pdf).
var pdfBytes = []byte("%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n")

// fileURL is the download path of a stored name.
func fileURL(name string) string { return "/api/v1/files/" + name }

// download fetches a stored file with headers; it returns status, body
// and the response.
func download(t testing.TB, s *apitest.Server, path string, headers map[string]string) (int, []byte, *http.Response) {
	t.Helper()
	res, out := s.Do(t, http.MethodGet, path, nil, headers)
	apitest.CheckCommon(t, res, out)
	return res.StatusCode, out, res
}
