package api

import (
	"context"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"svcd/engine"
	"svcd/engine/auth"
	"svcd/engine/files"
)

// Files is what the file routes need (engine/files).
type Files interface {
	Upload(ctx context.Context, p engine.Principal, coll, id, field string, parts files.Parts) (*files.Uploaded, uint64, error)
	CreateRecord(ctx context.Context, p engine.Principal, coll string, parts files.Parts) (*engine.Record, uint64, error)
	UpdateRecord(ctx context.Context, p engine.Principal, coll, id string, parts files.Parts, ifMatch string) (*engine.Record, uint64, error)
	Download(ctx context.Context, p engine.Principal, req files.DownloadRequest) (*files.Download, error)
	Token(ctx context.Context, p engine.Principal, coll, id, field, name, ip string) (*files.FileToken, error)
	// For PocketBase's paths (api/pbcompat_files.go).
	CreateRecordPublic(ctx context.Context, p engine.Principal, coll string, parts files.Parts) (*engine.Record, uint64, error)
	AnyToken(ctx context.Context, p engine.Principal) (*files.FileToken, error)
	Delete(ctx context.Context, p engine.Principal, coll, id, field, name string) (uint64, error)
	DeleteAll(ctx context.Context, p engine.Principal, coll, id, field string) (int, uint64, error)
	// For the admin's read of stored files (api/files_admin.go).
	Stats(ctx context.Context) (*files.Stats, error)
	List(ctx context.Context, coll string, page, perPage int, sort string) (*files.FileList, error)
}

// mountFiles serves SPEC.md's file routes.
func (s *Server) mountFiles(r chi.Router) {
	r.Get("/files/{filename}", s.downloadFile)
	r.Post("/files/{collection}/{id}/{field}", s.uploadFiles)
	r.Delete("/files/{collection}/{id}/{field}", s.deleteAllFiles)
	r.Post("/files/{collection}/{id}/{field}/{filename}/token", s.fileToken)
	r.Delete("/files/{collection}/{id}/{field}/{filename}", s.deleteFile)
}

// errNotMultipart answers an upload that is not multipart/form-data.
var errNotMultipart = engine.Errorf(engine.KindBadRequest, "Send the file as multipart/form-data (form field \"file\")")

func (s *Server) uploadFiles(w http.ResponseWriter, r *http.Request) {
	p := recordCaller(r)
	if p.Kind == engine.Anonymous {
		// Refused before the body is read (SPEC.md: uploads need
		// authentication).
		s.writeError(w, r, errAuthRequired)
		return
	}
	parts, err := multipartParts(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	up, idx, err := s.files.Upload(r.Context(), p, chi.URLParam(r, "collection"), chi.URLParam(r, "id"), chi.URLParam(r, "field"), parts)
	setIndex(w, idx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	// SPEC.md: the file object, or an array on a multiple field.
	if up.Multiple {
		writeData(w, http.StatusCreated, up.Files)
		return
	}
	writeData(w, http.StatusCreated, up.Files[0])
}

func (s *Server) deleteFile(w http.ResponseWriter, r *http.Request) {
	idx, err := s.files.Delete(r.Context(), recordCaller(r), chi.URLParam(r, "collection"), chi.URLParam(r, "id"),
		chi.URLParam(r, "field"), chi.URLParam(r, "filename"))
	setIndex(w, idx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) deleteAllFiles(w http.ResponseWriter, r *http.Request) {
	n, idx, err := s.files.DeleteAll(r.Context(), recordCaller(r), chi.URLParam(r, "collection"), chi.URLParam(r, "id"), chi.URLParam(r, "field"))
	setIndex(w, idx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, map[string]int{"deleted": n})
}

func (s *Server) fileToken(w http.ResponseWriter, r *http.Request) {
	tok, err := s.files.Token(r.Context(), recordCaller(r), chi.URLParam(r, "collection"), chi.URLParam(r, "id"),
		chi.URLParam(r, "field"), chi.URLParam(r, "filename"), s.clientIP(r))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeData(w, http.StatusOK, tok)
}

// appDataReader is a file token's subject as a reader of app data: an
// admin whose role does not reach app data reads as anonymous, as on the
// record routes.
func appDataReader(p engine.Principal) engine.Principal {
	if p.IsAdmin() && p.Role < requiredRole(http.MethodGet, recordsScope) {
		return engine.Principal{Request: p.Request}
	}
	return p
}

// errAuditFailed answers a download of an audited field whose audit row
// could not be written: an audited file is not served unaudited.
var errAuditFailed = &engine.Error{Kind: engine.KindUnavailable, Message: "The download could not be audited; retry", RetryAfter: 1}

func (s *Server) downloadFile(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.serveDownload(w, r, recordCaller(r), files.DownloadRequest{
		Name: chi.URLParam(r, "filename"), Token: q.Get("token"), Thumb: q.Get("thumb"), Fit: q.Get("fit"),
	}, q.Has("download") && q.Get("download") != "0", s.writeError)
}

// serveDownload serves the file req names to p (access decided by
// Files.Download, audited when the field says so): the bytes, a thumbnail
// or a redirect, with their cache headers. attachment asks for
// Content-Disposition: attachment. Both /api/v1/files and PocketBase's
// /api/files serve through it.
func (s *Server) serveDownload(w http.ResponseWriter, r *http.Request, p engine.Principal, req files.DownloadRequest, attachment bool, writeErr func(http.ResponseWriter, *http.Request, error)) {
	req.IP, req.AppData, req.Head = s.clientIP(r), appDataReader, r.Method == http.MethodHead
	d, err := s.files.Download(r.Context(), p, req)
	if err != nil {
		writeErr(w, r, err)
		return
	}
	if d.Blob != nil {
		defer d.Blob.Close()
	}
	if d.Audit && r.Method != http.MethodHead {
		if err := s.auditDownload(r, d); err != nil {
			s.log.Warn("files: audit a download", "file", req.Name, "err", err)
			writeErr(w, r, errAuditFailed)
			return
		}
	}
	if d.RedirectURL != "" {
		// SPEC.md Files rule 5: after the access checks and the audit row.
		w.Header().Set("Cache-Control", "private, no-store")
		http.Redirect(w, r, d.RedirectURL, http.StatusFound)
		return
	}
	h := w.Header()
	h.Set("Content-Type", d.MIME)
	h.Set("X-Content-Type-Options", "nosniff")
	tag := d.SHA256
	if len(tag) > 32 {
		tag = tag[:32]
	}
	if d.Thumbnail {
		tag += "-" + strings.NewReplacer(`"`, "", `\`, "").Replace(req.Thumb+req.Fit)
	}
	h.Set("ETag", `"`+tag+`"`)
	switch {
	case d.NoStore:
		h.Set("Cache-Control", "no-store")
	case d.Public:
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	default:
		h.Set("Cache-Control", "private, no-cache")
	}
	h.Set("Content-Disposition", contentDisposition(d.MIME, d.File.OriginalName, attachment))
	http.ServeContent(w, r, "", time.Unix(d.Created, 0), d.Blob)
}

// auditDownload writes the files.download row (SPEC.md: who, when, via
// rule or token) through the audit log, before the bytes leave.
func (s *Server) auditDownload(r *http.Request, d *files.Download) error {
	entry := auth.AuditEntry{
		ActorID: d.Who.ID, ActorEmail: d.Who.Email, Method: r.Method, Path: r.URL.Path, Action: "files.download",
		Target: fmt.Sprintf("%s/%s/%s/%s via %s", d.Collection, d.RecordID, d.Field, d.File.Filename, d.Via),
		Status: http.StatusOK,
	}
	if s.proxiesConfigured() {
		entry.IP = s.clientIP(r)
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 10*time.Second)
	defer cancel()
	return s.auditor.Audit(ctx, entry)
}

// inlineTypes are served inline; anything else is an attachment, so a
// browser never renders user content as a page of this origin.
var inlineTypes = map[string]bool{
	"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true, "image/avif": true,
	"image/bmp": true, "image/x-icon": true, "application/pdf": true, "text/plain": true,
	"audio/mpeg": true, "audio/ogg": true, "audio/wav": true, "audio/wave": true, "video/mp4": true,
	"video/webm": true, "video/ogg": true, "application/ogg": true,
}

// contentDisposition names the file with its original name (RFC 6266,
// UTF-8 names encoded).
func contentDisposition(mimeType, name string, attachment bool) string {
	kind := "inline"
	if attachment || !inlineTypes[mimeType] {
		kind = "attachment"
	}
	if v := mime.FormatMediaType(kind, map[string]string{"filename": name}); v != "" {
		return v
	}
	return kind
}
