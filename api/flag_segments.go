package api

import (
	"context"
	"net/http"

	"github.com/go-chi/chi/v5"

	"svcd/engine/flags"
)

// FlagSegments is what the segment routes need (engine/flags).
type FlagSegments interface {
	ListSegments(ctx context.Context) ([]*flags.Segment, error)
	Segment(ctx context.Context, name string) (*flags.Segment, error)
	PutSegment(ctx context.Context, body []byte) (*flags.Segment, bool, uint64, error)
	PatchSegment(ctx context.Context, name string, patch []byte) (*flags.Segment, uint64, error)
	DeleteSegment(ctx context.Context, name string) (uint64, error)
}

// Flag segment routes (developer role, docs/flags.md "Segments"):
//
//	GET    /admin/flag-segments         every segment, by name
//	POST   /admin/flag-segments         create (201), or replace the segment with that name (200)
//	GET    /admin/flag-segments/{name}  one segment
//	PATCH  /admin/flag-segments/{name}  {conditions}
//	DELETE /admin/flag-segments/{name}  delete (409 while referenced)
func (s *Server) mountFlagSegments(r chi.Router) {
	r.Get("/admin/flag-segments", s.listSegments)
	r.Post("/admin/flag-segments", s.putSegment)
	r.Get("/admin/flag-segments/{name}", s.getSegment)
	r.Patch("/admin/flag-segments/{name}", s.patchSegment)
	r.Delete("/admin/flag-segments/{name}", s.deleteSegment)
}

func (s *Server) listSegments(w http.ResponseWriter, r *http.Request) {
	l, err := s.segments.ListSegments(r.Context())
	s.answer(w, r, http.StatusOK, l, 0, err)
}

func (s *Server) getSegment(w http.ResponseWriter, r *http.Request) {
	v, err := s.segments.Segment(r.Context(), chi.URLParam(r, "name"))
	s.answer(w, r, http.StatusOK, v, 0, err)
}

func (s *Server) putSegment(w http.ResponseWriter, r *http.Request) {
	b, err := s.readBody(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	v, created, idx, err := s.segments.PutSegment(r.Context(), b)
	s.answer(w, r, createdOr(created), v, idx, err)
}

func (s *Server) patchSegment(w http.ResponseWriter, r *http.Request) {
	b, err := s.readBody(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	v, idx, err := s.segments.PatchSegment(r.Context(), chi.URLParam(r, "name"), b)
	s.answer(w, r, http.StatusOK, v, idx, err)
}

func (s *Server) deleteSegment(w http.ResponseWriter, r *http.Request) {
	idx, err := s.segments.DeleteSegment(r.Context(), chi.URLParam(r, "name"))
	s.answer(w, r, http.StatusNoContent, nil, idx, err)
}
