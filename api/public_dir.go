package api

import (
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// publicSite serves SVC_PUBLIC_DIR at / for the paths no route claims:
// files with their content type, index.html for a folder, never a listing,
// nothing outside the folder. With spa set, a GET that accepts HTML and
// matches no file gets the folder's index.html (a client-side router's
// page). The API and the probes always win: their paths never reach it.
type publicSite struct {
	root fs.FS
	spa  bool
}

// newPublicSite opens dir as an os.Root, so that no symbolic link leads
// out of it; nil when dir is empty (the feature is off).
func newPublicSite(dir string, spa bool) (*publicSite, error) {
	if dir == "" {
		return nil, nil
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("public dir: %w", err)
	}
	return &publicSite{root: root.FS(), spa: spa}, nil
}

// reservedFirstSegments are the first path segments of the API, the probes
// and realtime: a file of the site with one of these names is never served.
var reservedFirstSegments = map[string]bool{"api": true, "_": true, "realtime": true}

// claims tells whether the site may answer r: a GET or HEAD outside the
// reserved paths.
func (p *publicSite) claims(r *http.Request) bool {
	if p == nil || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
		return false
	}
	first, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	return !reservedFirstSegments[first]
}

// serve answers r from the folder; ok is false when nothing there fits (the
// caller answers 404).
func (p *publicSite) serve(w http.ResponseWriter, r *http.Request) (ok bool) {
	name, valid := siteName(r.URL.Path)
	if !valid {
		return false
	}
	if p.serveFile(w, r, name) {
		return true
	}
	if p.spa && acceptsHTML(r) {
		return p.serveFile(w, r, "index.html")
	}
	return false
}

// siteName turns a URL path into a name inside the folder: cleaned,
// relative, with no "..", no backslash and no NUL (fs.ValidPath).
func siteName(urlPath string) (string, bool) {
	if strings.ContainsAny(urlPath, "\\\x00") {
		return "", false
	}
	for _, seg := range strings.Split(urlPath, "/") {
		if seg == ".." {
			return "", false
		}
	}
	name := strings.TrimPrefix(path.Clean("/"+urlPath), "/")
	if name == "" {
		name = "."
	}
	return name, fs.ValidPath(name)
}

// serveFile writes one regular file, or a folder's index.html; false when
// there is neither.
func (p *publicSite) serveFile(w http.ResponseWriter, r *http.Request, name string) bool {
	st, err := fs.Stat(p.root, name)
	if err != nil {
		return false
	}
	if st.IsDir() {
		if !strings.HasSuffix(r.URL.Path, "/") {
			// A folder's page is served at its path with a slash, so
			// its relative links resolve inside it.
			http.Redirect(w, r, r.URL.Path+"/", http.StatusMovedPermanently)
			return true
		}
		name = path.Join(name, "index.html")
		if st, err = fs.Stat(p.root, name); err != nil || st.IsDir() {
			return false
		}
	}
	if !st.Mode().IsRegular() {
		return false
	}
	f, err := p.root.Open(name)
	if err != nil {
		return false
	}
	defer f.Close()
	if ct := mime.TypeByExtension(filepath.Ext(name)); ct != "" {
		w.Header().Set("Content-Type", ct)
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	rs, ok := f.(io.ReadSeeker)
	if !ok {
		return false
	}
	http.ServeContent(w, r, name, st.ModTime(), rs)
	return true
}

// acceptsHTML tells a browser's page load from an API client or an asset
// request: the Accept header names text/html.
func acceptsHTML(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "text/html")
}
