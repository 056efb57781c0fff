package pbcompat

import (
	"context"
	"net/http"
	"regexp"

	"github.com/go-chi/chi/v5"

	"svcd/engine"
	"svcd/engine/files"
)

// PocketBase's files (pb:apis/file.go): multipart record writes,
// GET /api/files/{collection}/{record}/{filename} and POST /api/files/token,
// over svcd's files module (engine/files), with the same access checks,
// limits and audit as /api/v1/files. docs/pocketbase-files.md.

// Files is what the file routes need; api hands its files module wrapped
// with its multipart reader and download writer (api/pbcompat_files.go),
// so parsing limits, download headers and audit stay one policy.
type Files interface {
	// Parts reads a multipart body part by part.
	Parts(r *http.Request) (files.Parts, error)
	// CreateRecordPublic creates a record with its files; an anonymous
	// caller may send files (the create rule decides at apply).
	CreateRecordPublic(ctx context.Context, p engine.Principal, coll string, parts files.Parts) (*engine.Record, uint64, error)
	UpdateRecord(ctx context.Context, p engine.Principal, coll, id string, parts files.Parts, ifMatch string) (*engine.Record, uint64, error)
	// AnyToken issues a token opening every file p may view.
	AnyToken(ctx context.Context, p engine.Principal) (*files.FileToken, error)
	// Serve answers a download for p as /api/v1/files does, errors
	// written by writeErr.
	Serve(w http.ResponseWriter, r *http.Request, p engine.Principal, req files.DownloadRequest, attachment bool, writeErr func(http.ResponseWriter, *http.Request, error))
}

// mountFiles serves PocketBase's file routes.
func mountFiles(r chi.Router, d *Deps) {
	r.Get("/api/files/{collection}/{record}/{filename}", d.downloadFile)
	r.Post("/api/files/token", d.fileToken)
}

// createMultipart answers a multipart record create: fields, @jsonPayload
// and file parts in one request, one command through the log.
func (d *Deps) createMultipart(w http.ResponseWriter, r *http.Request, coll string) {
	p := d.recordCaller(r)
	c, err := d.Catalog.Collection(coll)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	parts, err := d.Files.Parts(r)
	if err != nil {
		WriteError(w, r, WriteFailure(err, MsgFailedCreate))
		return
	}
	rec, _, err := d.Files.CreateRecordPublic(r.Context(), p, coll, formParts(parts, c))
	if err != nil {
		WriteError(w, r, WriteFailure(err, MsgFailedCreate))
		return
	}
	d.writeWritten(w, r, http.StatusOK, c, rec, p)
}

// updateMultipart answers a multipart record update ("field" replaces a
// file field's files, "field+" appends, "field-" removes by name).
func (d *Deps) updateMultipart(w http.ResponseWriter, r *http.Request, coll, id string) {
	p := d.recordCaller(r)
	c, err := d.Catalog.Collection(coll)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	parts, err := d.Files.Parts(r)
	if err != nil {
		WriteError(w, r, WriteFailure(err, MsgFailedUpdate))
		return
	}
	rec, _, err := d.Files.UpdateRecord(r.Context(), p, coll, id, formParts(parts, c), r.Header.Get("If-Match"))
	if err != nil {
		WriteError(w, r, WriteFailure(err, MsgFailedUpdate))
		return
	}
	d.writeWritten(w, r, http.StatusOK, c, rec, p)
}

// thumbSpec is PocketBase's thumb format (pb:tools/filesystem).
var thumbSpec = regexp.MustCompile(`^(\d+)x(\d+)([tbf])?$`)

// ThumbOf translates PocketBase's thumb parameter into svcd's thumb and
// fit: WxH (center crop), WxHt and WxHb (top and bottom crop: svcd crops
// around the centre) are cover, WxHf is contain, 0xH and Wx0 keep the
// proportion. Anything else serves the original, as PocketBase does for
// a size it does not know.
func ThumbOf(pb string) (thumb, fit string) {
	m := thumbSpec.FindStringSubmatch(pb)
	if m == nil {
		return "", ""
	}
	if m[3] == "f" {
		return m[1] + "x" + m[2], "contain"
	}
	return m[1] + "x" + m[2], "cover"
}

func (d *Deps) downloadFile(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	thumb, fit := ThumbOf(q.Get("thumb"))
	req := files.DownloadRequest{
		Name: chi.URLParam(r, "filename"), Token: q.Get("token"), Thumb: thumb, Fit: fit,
		Collection: chi.URLParam(r, "collection"), RecordID: chi.URLParam(r, "record"),
	}
	// PocketBase: any non-empty download value other than 0 or false.
	dl := q.Get("download")
	attachment := dl != "" && dl != "0" && dl != "false"
	d.Files.Serve(w, r, d.recordCaller(r), req, attachment, writeDownloadError)
}

// writeDownloadError answers a refused download as PocketBase does: a
// file the caller may not fetch (no token, a token of another file, a
// rule refusing) is not found (pb:apis/file.go); svcd's other answers
// (410 for a spent one-time token, 503) keep their status.
func writeDownloadError(w http.ResponseWriter, r *http.Request, err error) {
	if e := engine.AsError(err); e != nil && (e.Kind == engine.KindUnauthorized || e.Kind == engine.KindForbidden) {
		err = NewError(http.StatusNotFound, "", nil)
	}
	WriteError(w, r, err)
}

// fileToken answers POST /api/files/token: {"token": ...}, a token that
// opens every protected file the caller may view (pb:apis/file.go).
func (d *Deps) fileToken(w http.ResponseWriter, r *http.Request) {
	p := d.recordCaller(r)
	if p.Kind == engine.Anonymous {
		WriteError(w, r, NewError(http.StatusUnauthorized, "Missing auth context.", nil))
		return
	}
	tok, err := d.Files.AnyToken(r.Context(), p)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	WriteJSON(w, http.StatusOK, map[string]string{"token": tok.Token})
}
