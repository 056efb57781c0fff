package main

import (
	"fmt"
	"io"
	"runtime/debug"
	"strings"
)

// version is set at build time with -ldflags "-X main.version=...";
// otherwise the module's version from the build info is used.
var version = "dev"

// buildInfo is what the binary knows of its own build.
type buildInfo struct {
	Version  string // -ldflags version, else the module version, else "dev"
	Module   string // the main module's version: "(devel)" for a build from a work tree
	Revision string // vcs.revision: the commit built
	Time     string // vcs.time: that commit's time (RFC 3339)
	Modified bool   // vcs.modified: the work tree had changes
	Go       string // the Go version that built it
}

// readBuildInfo reads the binary's build info (runtime/debug): `go build`
// in a git work tree stamps the revision, its time and whether the tree
// was modified.
func readBuildInfo() buildInfo {
	bi, _ := debug.ReadBuildInfo()
	return parseBuildInfo(version, bi)
}

// parseBuildInfo is readBuildInfo for a given -ldflags version and build
// info (nil: none).
func parseBuildInfo(ldVersion string, bi *debug.BuildInfo) buildInfo {
	b := buildInfo{Version: ldVersion}
	if bi == nil {
		return b
	}
	b.Module, b.Go = bi.Main.Version, bi.GoVersion
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	if b.Version == "dev" && b.Module != "" && b.Module != "(devel)" {
		b.Version = b.Module
	}
	return b
}

// short is the version with an abbreviated revision, for the banner:
// "v1.2.0 (3f2a9c1d0e4b, 2026-11-20T10:00:00Z, modified)".
func (b buildInfo) short() string {
	var parts []string
	if b.Revision != "" {
		parts = append(parts, b.Revision[:min(12, len(b.Revision))])
	}
	if b.Time != "" {
		parts = append(parts, b.Time)
	}
	if b.Modified {
		parts = append(parts, "modified")
	}
	if len(parts) == 0 {
		return b.Version
	}
	return b.Version + " (" + strings.Join(parts, ", ") + ")"
}

// print writes `svcd version`'s answer.
func (b buildInfo) print(w io.Writer) {
	fmt.Fprintf(w, "svcd %s\n", b.Version)
	field := func(k, v string) {
		if v != "" {
			fmt.Fprintf(w, "  %-9s %s\n", k+":", v)
		}
	}
	field("module", b.Module)
	rev := b.Revision
	if rev != "" && b.Modified {
		rev += " (modified)"
	}
	if rev == "" {
		rev = "unknown (built outside a git work tree, or with -buildvcs=false)"
	}
	field("revision", rev)
	field("time", b.Time)
	field("go", b.Go)
}
