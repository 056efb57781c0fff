package pbcompat

import (
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"
)

// EnabledSetting turns the layer on ("1", the default) or off ("0"); it is
// read on every request, so a change applies at once.
const EnabledSetting = "pocketbase.enabled"

// Mount registers PocketBase's paths on r. r should already carry what
// every API route needs (caught-up replica, consistency); Mount adds the
// gate on pocketbase.enabled and the compat authentication, then calls
// each part's registrar (see the package doc).
func Mount(r chi.Router, d Deps) {
	dp := &d
	r.Group(func(r chi.Router) {
		r.Use(dp.gate, dp.authenticate)
		mountHealth(r, dp)
		mountRecords(r, dp)
		mountCollections(r, dp)
		mountAuth(r, dp)
		mountRealtime(r, dp)
		mountFiles(r, dp)
		mountBatch(r, dp)
	})
}

// OwnsPath reports whether a route pattern or path is PocketBase's (the
// layer's): everything under /api/ outside svcd's own /api/v1. The OpenAPI
// document leaves these out (docs/pocketbase.md describes them).
func OwnsPath(path string) bool {
	return strings.HasPrefix(path, "/api/") && path != "/api/v1" && !strings.HasPrefix(path, "/api/v1/")
}

// Enabled reports whether the layer serves requests now.
func (d *Deps) Enabled() bool {
	if d.Settings == nil {
		return true
	}
	switch strings.ToLower(strings.TrimSpace(d.Settings.Setting(EnabledSetting))) {
	case "0", "false", "off", "no":
		return false
	}
	return true
}

// gate answers 404 on every path of the layer while it is turned off.
func (d *Deps) gate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !d.Enabled() {
			if d.Off != nil {
				d.Off(w, r)
				return
			}
			WriteError(w, r, NewError(http.StatusNotFound, "", nil))
			return
		}
		next.ServeHTTP(w, r)
	})
}
