package files

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"mime"
	"path"
	"regexp"
	"strings"
	"time"
	"unicode"

	"github.com/google/uuid"

	"svcd/engine"
)

// Part is one part of a multipart request, in the order the client sent
// it. The HTTP layer parses the request and sniffs each file's type from
// its first bytes; the module validates and stores.
type Part struct {
	// Name is the form field name: "file" on the files endpoint; a field
	// name, possibly with a "+" (append) or "-" (remove) suffix, or
	// "@jsonPayload", on the record endpoints.
	Name string
	// FileName is the client's name of the file; "" for a plain value.
	FileName string
	// MIME is the type sniffed from the content (files only).
	MIME string
	// Body yields the part's content; it is read at most once, in order.
	Body io.Reader
}

// Parts yields the parts of one request in order, then io.EOF.
type Parts interface {
	Next() (*Part, error)
}

// errNoFileSent answers an upload without a file part.
var errNoFileSent = &engine.Error{Kind: engine.KindBadRequest, Message: `Send the file as the multipart form field "file"`,
	Details: map[string]any{"file": "is required"}}

// errTooLarge is what the size-limited reader fails with.
var errTooLarge = errors.New("files: over the size limit")

// limitedHash passes at most max bytes of r on, hashing them; one more
// byte fails the read with errTooLarge, which abandons the blob's write.
// It remembers whether r failed, so a failed write can be told apart: the
// client's (r) or the store's.
type limitedHash struct {
	r       io.Reader
	n       int64
	max     int64
	h       hash.Hash
	over    bool
	readErr error
}

func (l *limitedHash) Read(p []byte) (int, error) {
	if int64(len(p)) > l.max-l.n+1 {
		p = p[:l.max-l.n+1]
	}
	n, err := l.r.Read(p)
	l.n += int64(n)
	if l.n > l.max {
		l.over = true
		return 0, errTooLarge
	}
	if err != nil && err != io.EOF {
		l.readErr = err
	}
	l.h.Write(p[:n])
	return n, err
}

// sizeLimit is the largest file field f accepts: its maxSize when set
// and smaller than files.max_upload_bytes, else the latter.
func (m *Files) sizeLimit(f *engine.FieldInfo) int64 {
	limit := m.maxUpload()
	if f.FileMaxSize > 0 && f.FileMaxSize < limit {
		limit = f.FileMaxSize
	}
	return limit
}

// checkType refuses a type the global deny list names (415) or the
// field's mimeTypes do not admit (422), before any byte is stored.
func (m *Files) checkType(f *engine.FieldInfo, mimeType string) error {
	if m.denied(mimeType) {
		return &engine.Error{Kind: engine.KindUnsupportedMedia, Message: fmt.Sprintf("Files of type %s are not accepted", mimeType),
			Details: map[string]any{f.Name: "type " + mimeType + " is not accepted (" + settingMimeDeny + ")"}}
	}
	if len(f.MimeTypes) > 0 && !mimeAllowed(f.MimeTypes, mimeType) {
		return engine.FieldError(f.Name, fmt.Sprintf("type %s is not one of %s", mimeType, strings.Join(f.MimeTypes, ", ")))
	}
	return nil
}

// mimeAllowed matches mimeType against a field's list (type/subtype or
// type/*).
func mimeAllowed(list []string, mimeType string) bool {
	major, _, _ := strings.Cut(mimeType, "/")
	for _, a := range list {
		if a == mimeType || strings.HasSuffix(a, "/*") && strings.TrimSuffix(a, "/*") == major {
			return true
		}
	}
	return false
}

// store validates part for field f and streams it into store under a new
// name: the metadata of the stored blob. Nothing is stored when the type
// is refused; a part over the size limit leaves nothing either (the
// store abandons the write).
func (m *Files) store(ctx context.Context, store BlobStore, driver string, f *engine.FieldInfo, part *Part) (fileMeta, error) {
	mimeType := normalizeMIME(part.MIME)
	if err := m.checkType(f, mimeType); err != nil {
		return fileMeta{}, err
	}
	original := cleanName(part.FileName)
	name := uuid.NewString() + "." + extension(original, mimeType)
	limit := m.sizeLimit(f)
	lr := &limitedHash{r: part.Body, max: limit, h: sha256.New()}
	if err := store.Put(ctx, name, mimeType, lr); err != nil {
		if lr.over {
			return fileMeta{}, engine.FieldError(f.Name, fmt.Sprintf("must be at most %d bytes", limit))
		}
		if e := engine.AsError(err); e != nil {
			return fileMeta{}, e
		}
		if lr.readErr == nil && ctx.Err() == nil {
			// The client sent its part; the store refused it (S3
			// unreachable, a wrong bucket, region or key).
			m.log.Warn("files: storage failed a write", "driver", driver, "name", name, "err", err)
			return fileMeta{}, storageUnavailable(driver)
		}
		return fileMeta{}, fmt.Errorf("files: store %s: %w", name, err)
	}
	return fileMeta{Name: name, Field: f.ID, Original: original, Size: lr.n, MIME: mimeType,
		SHA256: hex.EncodeToString(lr.h.Sum(nil)), Driver: driver}, nil
}

// discard deletes blobs no command references (the upload failed for
// certain); what it misses, the collector removes later.
func (m *Files) discard(store BlobStore, metas []fileMeta) {
	if len(metas) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, f := range metas {
		if err := store.Delete(ctx, f.Name); err != nil {
			m.log.Warn("files: could not delete an unreferenced upload (the collector will)", "name", f.Name, "err", err)
		}
	}
}

// definite reports whether err certainly means the command was not
// applied (a domain refusal), so its blobs may go at once. A timeout or a
// lost leader may hide a commit: those blobs wait for the collector.
func definite(err error) bool {
	e := engine.AsError(err)
	return e != nil && e.Kind != engine.KindUnavailable && e.Kind != engine.KindInternal
}

// currentStore is the store new uploads go to, and its driver name.
func (m *Files) currentStore(ctx context.Context) (BlobStore, string, error) {
	d := m.driver()
	s, err := m.stores.Store(ctx, d)
	if err != nil {
		return nil, "", &engine.Error{Kind: engine.KindUnavailable, Message: fmt.Sprintf("File storage (%s) is not available: %v", d, err), RetryAfter: 5}
	}
	return s, d, nil
}

// normalizeMIME lower-cases a type and drops its parameters.
func normalizeMIME(t string) string {
	t, _, _ = strings.Cut(t, ";")
	t = strings.ToLower(strings.TrimSpace(t))
	if t == "" {
		return "application/octet-stream"
	}
	return t
}

// cleanName is the client's file name as kept: the last path element,
// without control characters, at most 255 bytes; "file" when nothing
// remains.
func cleanName(n string) string {
	n = strings.ReplaceAll(n, `\`, "/")
	n = path.Base(n)
	n = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '"' {
			return -1
		}
		return r
	}, n)
	n = strings.TrimSpace(n)
	for len(n) > 255 {
		_, size := lastRune(n)
		n = n[:len(n)-size]
	}
	if n == "" || n == "." || n == "/" {
		return "file"
	}
	return n
}

func lastRune(s string) (rune, int) {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] < 0x80 || s[i] >= 0xC0 {
			return rune(s[i]), len(s) - i
		}
	}
	return 0, 1
}

var extPattern = regexp.MustCompile(`^[a-z0-9]{1,12}$`)

// preferredExt names the usual extension of common types (the system's
// MIME table lists several, alphabetically: text/plain would be .asc).
var preferredExt = map[string]string{
	"text/plain": "txt", "image/jpeg": "jpg", "image/png": "png", "image/gif": "gif", "image/webp": "webp",
	"image/avif": "avif", "application/pdf": "pdf", "video/mp4": "mp4", "audio/mpeg": "mp3",
	"application/zip": "zip", "application/json": "json", "text/csv": "csv",
}

// extension is the stored name's extension: the original's when it is
// plain, else one of the type's, else "bin".
func extension(original, mimeType string) string {
	if e := strings.ToLower(strings.TrimPrefix(path.Ext(original), ".")); extPattern.MatchString(e) {
		return e
	}
	if e, ok := preferredExt[mimeType]; ok {
		return e
	}
	if exts, _ := mime.ExtensionsByType(mimeType); len(exts) > 0 {
		if e := strings.TrimPrefix(exts[0], "."); extPattern.MatchString(e) {
			return e
		}
	}
	return "bin"
}
