package pbcompat

import "github.com/go-chi/chi/v5"

// Part C replaces this file: it is a stub so that the layer compiles
// before that part lands.

// UserAuth, AuthFlows, AdminAuth and OAuth2Flows are what the auth routes
// need (part C narrows them).
type (
	UserAuth    interface{}
	AuthFlows   interface{}
	AdminAuth   interface{}
	OAuth2Flows interface{}
)

// mountAuth registers part C's routes (none yet).
func mountAuth(r chi.Router, d *Deps) {}
