package api

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	"svcd/engine"
	"svcd/engine/files"
)

// maxFileParts bounds the file parts of one request.
const maxFileParts = 100

// isMultipart reports a multipart/form-data request (a record write with
// files, as PocketBase's clients send it).
func isMultipart(r *http.Request) bool {
	t, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && t == "multipart/form-data"
}

// multipartParts reads r's multipart body part by part, never whole: each
// file's type is sniffed from its first 512 bytes and the rest streams on
// to storage.
func multipartParts(r *http.Request) (files.Parts, error) {
	if !isMultipart(r) {
		return nil, errNotMultipart
	}
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, engine.Errorf(engine.KindBadRequest, "Malformed multipart body: %v", err)
	}
	return &partReader{mr: mr}, nil
}

// partReader yields the parts of a multipart body (files.Parts).
type partReader struct {
	mr    *multipart.Reader
	files int
}

func (p *partReader) Next() (*files.Part, error) {
	part, err := p.mr.NextPart()
	if errors.Is(err, io.EOF) {
		return nil, io.EOF
	}
	if err != nil {
		return nil, bodyError(err)
	}
	out := &files.Part{Name: part.FormName(), FileName: part.FileName(), Body: bodyReader{part}}
	if out.FileName == "" {
		return out, nil
	}
	if p.files++; p.files > maxFileParts {
		return nil, engine.Errorf(engine.KindBadRequest, "At most %d files per request", maxFileParts)
	}
	head := make([]byte, 512)
	n, err := io.ReadFull(part, head)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, bodyError(err)
	}
	head = head[:n]
	out.MIME = sniffMIME(head, out.FileName)
	out.Body = io.MultiReader(bytes.NewReader(head), bodyReader{part})
	return out, nil
}

// bodyReader turns a failure to read the request (a client gone, a
// malformed body, one too slow) into the client's error, not a storage
// failure.
type bodyReader struct{ r io.Reader }

func (b bodyReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		return n, bodyError(err)
	}
	return n, err
}

// bodyError is the answer to a body that could not be read.
func bodyError(err error) error {
	if e := engine.AsError(err); e != nil {
		return e
	}
	return engine.Errorf(engine.KindBadRequest, "Could not read the multipart body: %v", err)
}

// createRecordMultipart creates a record from a multipart form: its
// fields and files in one command.
func (s *Server) createRecordMultipart(w http.ResponseWriter, r *http.Request) {
	parts, err := multipartParts(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	rec, idx, err := s.files.CreateRecord(r.Context(), recordCaller(r), chi.URLParam(r, "collection"), parts)
	setIndex(w, idx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("ETag", rec.ETag)
	writeRawData(w, http.StatusCreated, rec.JSON)
}

// updateRecordMultipart changes a record from a multipart form.
func (s *Server) updateRecordMultipart(w http.ResponseWriter, r *http.Request) {
	parts, err := multipartParts(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	rec, idx, err := s.files.UpdateRecord(r.Context(), recordCaller(r), chi.URLParam(r, "collection"), chi.URLParam(r, "id"), parts, r.Header.Get("If-Match"))
	setIndex(w, idx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("ETag", rec.ETag)
	writeRawData(w, http.StatusOK, rec.JSON)
}

// sniffMIME is the type of a file from its first bytes
// (net/http.DetectContentType), refined where that stops short: AVIF,
// Windows executables, SVG; and, for text it cannot tell apart, the
// name's extension when it names a text type (so a script sent as
// "x.js" is text/javascript, refused by the default deny list). The
// client's Content-Type is never read.
func sniffMIME(head []byte, name string) string {
	t, _, _ := strings.Cut(http.DetectContentType(head), ";")
	t = strings.TrimSpace(t)
	switch {
	case isAVIF(head):
		return "image/avif"
	case bytes.HasPrefix(head, []byte("MZ")):
		return "application/x-msdownload"
	}
	if t != "text/plain" && t != "text/xml" {
		return t
	}
	if looksSVG(head) {
		return "image/svg+xml"
	}
	ext := strings.ToLower(name[strings.LastIndex(name, ".")+1:])
	if strings.LastIndex(name, ".") < 0 {
		ext = ""
	}
	if byExt, ok := textTypes[ext]; ok {
		return byExt
	}
	return t
}

// textTypes are the text types a name's extension decides once the
// content is known to be text.
var textTypes = map[string]string{
	"js": "text/javascript", "mjs": "text/javascript", "cjs": "text/javascript",
	"html": "text/html", "htm": "text/html", "xhtml": "application/xhtml+xml", "svg": "image/svg+xml",
	"css": "text/css", "csv": "text/csv", "json": "application/json", "md": "text/markdown",
	"xml": "text/xml", "txt": "text/plain",
}

// isAVIF reports an ISO BMFF file whose major or compatible brands say
// AVIF.
func isAVIF(head []byte) bool {
	if len(head) < 16 || !bytes.Equal(head[4:8], []byte("ftyp")) {
		return false
	}
	size := int(head[0])<<24 | int(head[1])<<16 | int(head[2])<<8 | int(head[3])
	if size < 16 || size > len(head) {
		size = len(head)
	}
	for i := 8; i+4 <= size; i += 4 {
		if i == 12 {
			continue // the minor version
		}
		if b := string(head[i : i+4]); b == "avif" || b == "avis" {
			return true
		}
	}
	return false
}

// looksSVG reports text whose first element is <svg.
func looksSVG(head []byte) bool {
	return bytes.Contains(bytes.ToLower(head), []byte("<svg"))
}
