package pbcompat

import "github.com/go-chi/chi/v5"

// Part B replaces this file: it is a stub so that the layer compiles
// before that part lands.

// CollectionAdmin is what the collection routes need (part B narrows it).
type CollectionAdmin interface{}

// mountCollections registers part B's routes (none yet).
func mountCollections(r chi.Router, d *Deps) {}
