// Package dashboard serves the admin dashboard: a small single-page app
// (vanilla JavaScript ES modules, no build step) embedded in the binary
// and served at /_/.
//
// The page holds the admin's bearer token in sessionStorage and sends it
// in the Authorization header; it never relies on the cookie the sign-in
// routes also set (its requests go out with credentials "omit"), so a
// cross-site page cannot make it act: there is nothing ambient to ride on.
// Every answer carries a Content-Security-Policy that allows only this
// origin's scripts, styles and connections, and forbids framing.
package dashboard

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

//go:embed assets
var embedded embed.FS

// Prefix is where the dashboard is mounted.
const Prefix = "/_/"

// CSP is the Content-Security-Policy of every dashboard answer.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Assets is the embedded tree as served under Prefix+"assets/" (the
// page itself is index.html).
func Assets() fs.FS {
	sub, err := fs.Sub(embedded, "assets")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	return sub
}

// isPage reports whether seg, the first path segment after Prefix, is one
// of the page's own routes: those (with anything below them) and Prefix
// itself answer index.html, so that a page's URL (/_/collections/posts)
// survives a reload. Every other path under Prefix is not the
// dashboard's: it stays a 404, and a probe added later under /_/ is not
// shadowed. A new page adds its segment here, never a probe's name.
func isPage(seg string) bool {
	switch seg {
	case "collections", "tokens", "members":
		return true
	case "users", "admins", "settings", "logs", "audit", "webhooks", "flags", "sql", "jobs", "files":
		return true
	}
	return false
}

// Handler serves the dashboard. A path under Prefix that names an
// embedded file (assets/...) gets the file; Prefix and the page's routes
// (isPage) get index.html; anything else is notFound's.
// It is mounted below the probes: a router that serves /_/health and the
// like matches those first. notFound answers a missing asset (the API's
// error envelope).
func Handler(notFound http.Handler) http.Handler {
	sub := Assets()
	files := http.FileServer(http.FS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		setHeaders(w.Header())
		rel := strings.TrimPrefix(path.Clean("/"+strings.TrimPrefix(r.URL.Path, Prefix)), "/")
		if strings.HasPrefix(rel, "assets/") {
			name := strings.TrimPrefix(rel, "assets/")
			if st, err := fs.Stat(sub, name); err == nil && !st.IsDir() {
				w.Header().Set("Cache-Control", "no-cache")
				r2 := r.Clone(r.Context())
				r2.URL.Path = "/" + name
				files.ServeHTTP(w, r2)
				return
			}
			notFound.ServeHTTP(w, r)
			return
		}
		if first, _, _ := strings.Cut(rel, "/"); first != "" && !isPage(first) {
			notFound.ServeHTTP(w, r)
			return
		}
		index, err := fs.ReadFile(sub, "index.html")
		if err != nil {
			http.Error(w, "dashboard missing", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		if r.Method != http.MethodHead {
			_, _ = w.Write(index)
		}
	})
}

// setHeaders writes the security headers of every dashboard answer.
func setHeaders(h http.Header) {
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
}
