package main

import (
	"fmt"
	"io"
	"log/slog"
	"strings"

	"svcd/cmd/svcd/stack"
)

// banner is what a start prints once: the version, where it serves, links
// that answer there, the data directory, and how to create the first
// admin when there is none. On a terminal (the text log format) it is a
// block of lines for a person; in the JSON format it is one record, so the
// log stays one record a line.
type banner struct {
	build   buildInfo
	url     string // http://host:port
	what    string // "node node1 (raft Leader)", "3 nodes (raft 127.0.0.1:19300-19302)"
	dataDir string
	// noAdmin: no admin exists yet; createCmd is the svcd admin create
	// line that reaches this data; setupKey: SVC_SETUP_KEY is set.
	noAdmin   bool
	createCmd string
	setupKey  bool
	notReady  error // the node was not ready when the banner printed
}

// serveBanner is svcd serve's banner: the node listens on addr.
func serveBanner(cfg *config, st *stack.Stack, addr string, readyErr error) *banner {
	b := &banner{build: readBuildInfo(), url: "http://" + loopbackFor(addr), dataDir: cfg.dataDir,
		what:    fmt.Sprintf("node %s (raft %s)", st.Node.NodeID(), st.Node.State()),
		noAdmin: !st.Auth.Admins().HasAdmin(), createCmd: "svcd admin create", setupKey: cfg.setupKey != "", notReady: readyErr}
	if cfg.dataDir != defaultDataDir() {
		b.createCmd += " --dir " + cfg.dataDir
	}
	return b
}

// links are the banner's links: each answers a GET with 200 on a running
// node (TestBannerLinksAnswer follows them).
func (b *banner) links() [][2]string {
	return [][2]string{
		{"health", b.url + "/_/health"},
		{"cluster", b.url + "/_/cluster"},
		{"setup", b.url + "/api/v1/admin/setup/status"},
	}
}

// docs says where the API is described (the binary does not serve it).
const bannerDocs = "README.md and docs/ of the source (docs/api.md: every endpoint under /api/v1)"

func (b *banner) print(w io.Writer, log *slog.Logger, format string) {
	if format == "json" {
		attrs := []any{"version", b.build.short(), "url", b.url, "serves", b.what, "data", b.dataDir}
		for _, l := range b.links() {
			attrs = append(attrs, l[0], l[1])
		}
		attrs = append(attrs, "docs", bannerDocs)
		if b.notReady != nil {
			attrs = append(attrs, "not_ready", b.notReady.Error())
		}
		if b.noAdmin {
			attrs = append(attrs, "first_admin", b.createCmd+" EMAIL PASSWORD, or POST "+b.url+"/api/v1/admin/setup {email, password}")
		}
		log.Info("svcd serving", attrs...)
		return
	}
	var s strings.Builder
	fmt.Fprintf(&s, "\nsvcd %s serving at %s\n", b.build.short(), b.url)
	for _, l := range b.links() {
		fmt.Fprintf(&s, "  %-9s %s\n", l[0]+":", l[1])
	}
	fmt.Fprintf(&s, "  %-9s %s\n", "docs:", bannerDocs)
	fmt.Fprintf(&s, "  %-9s %s\n", "data:", b.dataDir)
	fmt.Fprintf(&s, "  %-9s %s\n", "serves:", b.what)
	if b.notReady != nil {
		fmt.Fprintf(&s, "  WARNING: not ready yet: %v\n", b.notReady)
	}
	if b.noAdmin {
		fmt.Fprintf(&s, "\nNo admin exists yet. Create the first one with either:\n")
		fmt.Fprintf(&s, "  %s you@example.com 'a-long-password'\n", b.createCmd)
		fmt.Fprintf(&s, "  curl -X POST %s/api/v1/admin/setup -H 'Content-Type: application/json' \\\n", b.url)
		fmt.Fprintf(&s, "       -d '{\"email\":\"you@example.com\",\"password\":\"a-long-password\"}'\n")
		if b.setupKey {
			fmt.Fprintf(&s, "  (SVC_SETUP_KEY is set: add -H 'X-Setup-Key: <the key>' to the request)\n")
		}
	}
	s.WriteString("\n")
	io.WriteString(w, s.String()) // one write: lines of other processes cannot cut it
}
