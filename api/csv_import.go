package api

import (
	"bytes"
	"errors"
	"io"
	"net/http"

	"github.com/go-chi/chi/v5"

	"svcd/engine"
)

// csvMaxBodyBytes bounds an import's body (docs/api.md). The body is read
// whole before the first row is committed, so an over-size import is
// refused (413) with nothing created.
const csvMaxBodyBytes = 64 << 20

func (s *Server) importCSV(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength > csvMaxBodyBytes {
		s.writeError(w, r, errCSVTooLarge)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(innermost(w), r.Body, csvMaxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		switch {
		case errors.As(err, &mbe):
			s.writeError(w, r, errCSVTooLarge)
		case engine.AsError(err) != nil:
			s.writeError(w, r, err) // too slow: 408 (body_rate.go)
		default:
			s.writeError(w, r, engine.Errorf(engine.KindBadRequest, "Could not read the request body"))
		}
		return
	}
	res, idx, err := s.csv.ImportCSV(r.Context(), principal(r), chi.URLParam(r, "collection"), bytes.NewReader(body))
	setIndex(w, idx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, res)
}

var errCSVTooLarge = engine.Errorf(engine.KindTooLarge, "CSV body too large (limit %d bytes)", csvMaxBodyBytes)
