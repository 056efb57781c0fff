package api

import (
	"embed"
	"net/http"
	"path"

	"github.com/go-chi/chi/v5"
)

// docsUI is the rendered reference: a page, a script and a style sheet
// written for svcd (no framework, about 7 KB), embedded so the reference
// works offline and loads nothing from elsewhere.
//
//go:embed docsui
var docsUI embed.FS

// docsCSP allows the page only its own assets and its own node.
const docsCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"form-action 'none'; base-uri 'none'; frame-ancestors 'none'"

// docsPage serves the reference page.
func (s *Server) docsPage(w http.ResponseWriter, r *http.Request) {
	s.serveDocsFile(w, r, "index.html", "text/html; charset=utf-8")
}

// docsAsset serves the page's script and style sheet.
func (s *Server) docsAsset(w http.ResponseWriter, r *http.Request) {
	switch name := chi.URLParam(r, "asset"); name {
	case "app.js":
		s.serveDocsFile(w, r, name, "text/javascript; charset=utf-8")
	case "app.css":
		s.serveDocsFile(w, r, name, "text/css; charset=utf-8")
	default:
		s.writeError(w, r, errRouteNotFound)
	}
}

// serveDocsFile writes one embedded file, or 404 when docs.enabled is off.
func (s *Server) serveDocsFile(w http.ResponseWriter, r *http.Request, name, contentType string) {
	if !s.docsEnabled() {
		s.writeError(w, r, errRouteNotFound)
		return
	}
	b, err := docsUI.ReadFile(path.Join("docsui", name))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Content-Security-Policy", docsCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}
