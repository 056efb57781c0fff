package api

import (
	"compress/gzip"
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"svcd/cluster"
	"svcd/engine"
	"svcd/engine/auth"
	"svcd/engine/backup"
)

// Backups is what the backup routes need (engine/backup).
type Backups interface {
	Take() (*backup.Copy, error)
	Restore(ctx context.Context, r io.Reader, by string) (*backup.RestoreResult, uint64, error)
	Runs(ctx context.Context, limit int) ([]backup.Run, error)
	RunBackup(ctx context.Context, trigger string) (*backup.Run, error)
}

// Backup and restore (owner; docs/operations.md):
//
//	GET  /admin/backup    a consistent copy of this node's database
//	POST /admin/restore   install an uploaded copy on every node
//	GET  /admin/backups   the backups written to backup.to
//	POST /admin/backups   write one to backup.to now
func (s *Server) mountBackups(r chi.Router) {
	if s.backups == nil {
		return
	}
	r.Get("/admin/backup", s.downloadBackup)
	r.Post("/admin/restore", s.restoreBackup)
	r.Get("/admin/backups", s.listBackups)
	r.Post("/admin/backups", s.runBackup)
}

// restoreWait bounds a restore's command: every node copies and checks a
// whole database when it applies it, which a large one makes slow.
const restoreWait = 30 * time.Minute

// downloadBackup streams a consistent copy of this node's database: a
// plain SQLite file of the state at the applied index it names
// (X-Svc-Backup-Index), compressed with ?gzip=1 (a .db.gz file) or, for a
// client that accepts it, as Content-Encoding: gzip. The copy is taken
// from a read transaction into a temporary file first, so applies never
// wait for the client. A download is recorded in the audit log.
func (s *Server) downloadBackup(w http.ResponseWriter, r *http.Request) {
	c, err := s.backups.Take()
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	defer c.Remove()
	f, err := c.Open()
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	defer f.Close()
	s.auditRead(r, "backup.download", strconv.FormatUint(c.Index, 10))
	gzFile := truthy(r.URL.Query().Get("gzip"))
	gzEncoded := !gzFile && acceptsGzip(r)
	h := w.Header()
	h.Set("X-Svc-Backup-Index", strconv.FormatUint(c.Index, 10))
	h.Set("X-Svc-Schema-Version", strconv.FormatInt(c.SchemaVersion, 10))
	h.Set("X-Svc-Backup-Sha256", c.SHA256)
	h.Set("X-Svc-Backup-Size", strconv.FormatInt(c.Size, 10))
	h.Set("Cache-Control", "no-store")
	h.Set("Vary", "Accept-Encoding")
	name := c.Name()
	switch {
	case gzFile:
		name += ".gz"
		h.Set("Content-Type", "application/gzip")
	case gzEncoded:
		h.Set("Content-Type", "application/vnd.sqlite3")
		h.Set("Content-Encoding", "gzip")
	default:
		h.Set("Content-Type", "application/vnd.sqlite3")
		h.Set("Content-Length", strconv.FormatInt(c.Size, 10))
	}
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": name}))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	var out io.Writer = w
	var zw *gzip.Writer
	if gzFile || gzEncoded {
		zw = gzip.NewWriter(w)
		out = zw
	}
	if _, err := io.Copy(out, f); err != nil {
		s.log.Warn("backup download ended early", "index", c.Index, "err", err)
		return
	}
	if zw != nil {
		zw.Close()
	}
}

// restoreBackup installs the uploaded database file (the raw body, or the
// multipart field "file"; gzip accepted) on every node at one log index.
func (s *Server) restoreBackup(w http.ResponseWriter, r *http.Request) {
	body, err := uploadedFile(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	ctx := cluster.WithApplyWait(r.Context(), restoreWait)
	res, idx, err := s.backups.Restore(ctx, body, principal(r).ID)
	s.answer(w, r, http.StatusOK, res, idx, err)
}

// uploadedFile is the request's file: the body, or the part named file of
// a multipart body.
func uploadedFile(r *http.Request) (io.Reader, error) {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt != "multipart/form-data" {
		return r.Body, nil
	}
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, engine.Errorf(engine.KindBadRequest, "Malformed multipart body: %v", err)
	}
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return nil, engine.FieldError("file", "No part named file: send the database file as the body, or as the multipart field file")
		}
		if err != nil {
			return nil, engine.Errorf(engine.KindBadRequest, "Malformed multipart body: %v", err)
		}
		if p.FormName() == "file" {
			return p, nil
		}
	}
}

// listBackups lists the backups written to backup.to (scheduled and
// started here), newest first: ?limit= (default 50, at most 1000).
func (s *Server) listBackups(w http.ResponseWriter, r *http.Request) {
	limit := 50
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			s.writeError(w, r, engine.FieldError("limit", "must be a whole number from 1 to 1000"))
			return
		}
		limit = n
	}
	runs, err := s.backups.Runs(r.Context(), limit)
	s.answer(w, r, http.StatusOK, runs, 0, err)
}

// runBackup writes a backup to backup.to now, as the schedule would.
func (s *Server) runBackup(w http.ResponseWriter, r *http.Request) {
	run, err := s.backups.RunBackup(r.Context(), "manual")
	if err != nil {
		if run != nil && !run.OK {
			s.writeError(w, r, &engine.Error{Kind: engine.KindUnavailable, RetryAfter: 5,
				Message: "The backup could not be written to " + run.Target + ": " + run.Error})
			return
		}
		s.writeError(w, r, err)
		return
	}
	writeData(w, http.StatusCreated, run)
}

// auditRead records a read that the audit log must show (a backup
// download hands out every table), which the audit middleware, for
// writes only, does not.
func (s *Server) auditRead(r *http.Request, action, target string) {
	p := principal(r)
	entry := auth.AuditEntry{ActorID: p.ID, ActorEmail: p.Email, Method: r.Method, Path: r.URL.Path,
		Action: action, Target: target, Status: http.StatusOK}
	if s.proxiesConfigured() {
		entry.IP = s.clientIP(r)
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 10*time.Second)
	defer cancel()
	if err := s.auditor.Audit(ctx, entry); err != nil {
		s.log.Warn("audit: could not record an admin action", "action", action, "err", err)
	}
}

// truthy reads a query flag.
func truthy(v string) bool {
	v = strings.ToLower(strings.TrimSpace(v))
	return v == "1" || v == "true" || v == "yes"
}

// acceptsGzip reports whether the client accepts a gzip content coding.
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			q := strings.TrimSpace(params)
			return !strings.HasPrefix(q, "q=0") || strings.HasPrefix(q, "q=0.") && strings.Trim(q[4:], "0") != ""
		}
	}
	return false
}
