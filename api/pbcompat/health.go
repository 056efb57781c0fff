package pbcompat

import (
	"net"
	"net/http"

	"github.com/go-chi/chi/v5"
)

// mountHealth serves GET /api/health with PocketBase's answer
// (pb:apis/health.go): {"message":"API is healthy.","code":200,"data":{}};
// superusers also get canBackup, realIP and possibleProxyHeader.
func mountHealth(r chi.Router, d *Deps) {
	r.Get("/api/health", func(w http.ResponseWriter, r *http.Request) {
		data := map[string]any{}
		if Principal(r).IsAdmin() {
			data["canBackup"] = true
			data["realIP"] = d.clientIP(r)
			data["possibleProxyHeader"] = ""
		}
		WriteJSON(w, http.StatusOK, struct {
			Message string         `json:"message"`
			Code    int            `json:"code"`
			Data    map[string]any `json:"data"`
		}{"API is healthy.", http.StatusOK, data})
	})
}

// clientIP is the caller's address.
func (d *Deps) clientIP(r *http.Request) string {
	if d.ClientIP != nil {
		return d.ClientIP(r)
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
