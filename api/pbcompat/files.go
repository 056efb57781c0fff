package pbcompat

import (
	"net/http"

	"github.com/go-chi/chi/v5"
)

// Part E replaces this file: it is a stub so that the layer compiles
// before that part lands.

// Files is what the file routes need (part E narrows it).
type Files interface{}

// mountFiles registers part E's routes (none yet).
func mountFiles(r chi.Router, d *Deps) {}

// createMultipart answers a multipart record create (part E serves it).
func (d *Deps) createMultipart(w http.ResponseWriter, r *http.Request, coll string) {
	WriteError(w, r, NewError(http.StatusBadRequest, "Multipart bodies are not supported yet", nil))
}

// updateMultipart answers a multipart record update (part E serves it).
func (d *Deps) updateMultipart(w http.ResponseWriter, r *http.Request, coll, id string) {
	WriteError(w, r, NewError(http.StatusBadRequest, "Multipart bodies are not supported yet", nil))
}
