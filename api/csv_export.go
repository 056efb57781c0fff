package api

import (
	"context"
	"io"
	"mime"
	"net/http"

	"github.com/go-chi/chi/v5"

	"svcd/engine"
	"svcd/engine/csv"
)

// CSV is what the CSV routes need (engine/csv).
type CSV interface {
	ExportCSV(coll string) (*csv.Export, error)
	ImportCSV(ctx context.Context, p engine.Principal, coll string, body io.Reader) (*csv.ImportResult, uint64, error)
}

// mountCSV serves the admin CSV routes (SPEC.md "CSV"): GET
// /admin/export/:collection streams a base collection as a CSV attachment,
// POST /admin/import/:collection creates records from a CSV body. Roles:
// app data, editor and above (roles.go).
func (s *Server) mountCSV(r chi.Router) {
	r.Get("/admin/export/{collection}", s.exportCSV)
	r.Post("/admin/import/{collection}", s.importCSV)
}

// exportCSV answers 404 or 422 before the first byte; after it, a failure
// can no longer change the status, so the connection is cut (the client
// sees a truncated transfer, never a short file that looks whole).
func (s *Server) exportCSV(w http.ResponseWriter, r *http.Request) {
	x, err := s.csv.ExportCSV(chi.URLParam(r, "collection"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/csv; charset=utf-8")
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": x.Name() + ".csv"}))
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	if err := x.WriteTo(r.Context(), w); err != nil {
		if r.Context().Err() == nil {
			s.log.Warn("csv export cut short", "collection", x.Name(), "err", err)
		}
		panic(http.ErrAbortHandler)
	}
}
