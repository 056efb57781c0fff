package api

import "net/http"

// answer ends a handler that called the domain: the error in the
// envelope, or v under data with status (204 and no body when status is
// http.StatusNoContent). idx, when not zero, is the log index of the
// write (X-Svc-Index), set on errors too: a refused write has one.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, status int, v any, idx uint64, err error) {
	setIndex(w, idx)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if status == http.StatusNoContent {
		w.WriteHeader(status)
		return
	}
	writeData(w, status, v)
}

// createdOr is 201 when created, else 200.
func createdOr(created bool) int {
	if created {
		return http.StatusCreated
	}
	return http.StatusOK
}
