package main

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
)

// TestHelp: svcd help, svcd help COMMAND, svcd COMMAND --help and -h exit
// 0 with the usage and examples on stdout, for every command; svcd alone
// prints the list on stderr and exits 2.
func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"--help"}, {"-h"}, {"help", "help"}} {
		r := svcd(t, "", nil, args...)
		if r.code != 0 || r.stderr != "" {
			t.Errorf("svcd %v: status %d, stderr %q", args, r.code, r.stderr)
		}
		for _, c := range commands() {
			if !strings.Contains(r.stdout, "\n  "+c.name+" ") {
				t.Errorf("svcd %v does not list %s:\n%s", args, c.name, r.stdout)
			}
		}
	}
	if r := svcd(t, "", nil); r.code != 2 || !strings.Contains(r.stderr, "Commands:") {
		t.Errorf("svcd without a command: status %d, stderr %q", r.code, r.stderr)
	}
	for _, c := range commands() {
		name := strings.Fields(c.name)
		for _, args := range [][]string{
			append([]string{"help"}, name...),
			append(slices.Clone(name), "--help"),
			append(slices.Clone(name), "-h"),
		} {
			r := svcd(t, "", nil, args...)
			if r.code != 0 || !strings.HasPrefix(r.stdout, "usage: svcd "+c.name) || !strings.Contains(r.stdout, "\nExamples:\n  ") {
				t.Errorf("svcd %s: status %d, stdout:\n%s\nstderr: %s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
			}
		}
	}
	for _, group := range []string{"admin", "repair"} {
		for _, args := range [][]string{{"help", group}, {group, "--help"}} {
			if r := svcd(t, "", nil, args...); r.code != 0 || !strings.Contains(r.stdout, "Commands:") {
				t.Errorf("svcd %v: status %d, stdout %q", args, r.code, r.stdout)
			}
		}
		if r := svcd(t, "", nil, group); r.code != 2 || !strings.Contains(r.stderr, "which command?") {
			t.Errorf("svcd %s alone: status %d, stderr %q", group, r.code, r.stderr)
		}
	}
}

// TestMistakesSuggest: an unknown command, subcommand, help topic or flag
// exits 2 and names the closest one; so do a missing argument and one too
// many.
func TestMistakesSuggest(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string // in stderr
	}{
		{[]string{"serv"}, `unknown command "serv" (did you mean "serve"?)`},
		{[]string{"verison"}, `(did you mean "version"?)`},
		{[]string{"clustre", "--nodes", "3"}, `(did you mean "cluster"?)`},
		{[]string{"admin", "creat", "a@b.c", "pw"}, `unknown command "creat" (did you mean "create"?)`},
		{[]string{"repair", "rebuild"}, `(did you mean "rebuild-db"?)`},
		{[]string{"help", "rotate"}, `(did you mean "rotate-key"?)`},
		{[]string{"serve", "--dri", "/tmp/x"}, "unknown flag --dri (did you mean --dir?)"},
		{[]string{"serve", "--htp=:9000"}, "unknown flag --htp (did you mean --http?)"},
		{[]string{"serve", "-bootsrap"}, "unknown flag --bootsrap (did you mean --bootstrap?)"},
		{[]string{"cluster", "--node", "3"}, "unknown flag --node (did you mean --nodes?)"},
		{[]string{"admin", "create", "a@b.c", "pw", "--data-dir", "x"}, "unknown flag --data-dir"},
		{[]string{"repair", "verify", "--dirr", "x"}, "unknown flag --dirr (did you mean --dir?)"},
		{[]string{"serve", "--log-format", "yaml"}, `log format "yaml": want text or json`},
		{[]string{"serve", "--http"}, "flag --http needs a value"},
		{[]string{"admin", "create", "a@b.c"}, "want EMAIL and PASSWORD, got 1 argument(s)"},
		{[]string{"version", "extra"}, `unexpected argument "extra"`},
		{[]string{"cluster", "--nodes", "many"}, `invalid value "many" for flag -nodes`},
	} {
		r := svcd(t, "", nil, c.args...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("svcd %s: status %d, stderr %q; want 2 and %q", strings.Join(c.args, " "), r.code, r.stderr, c.want)
		}
	}
	// Nothing near: no suggestion.
	if r := svcd(t, "", nil, "frobnicate"); r.code != 2 || strings.Contains(r.stderr, "did you mean") {
		t.Errorf("svcd frobnicate: status %d, stderr %q", r.code, r.stderr)
	}
}

// TestFlagsAfterArguments: svcd admin create EMAIL PASSWORD --dir DIR
// creates the admin in DIR (not in ./svc_data).
func TestFlagsAfterArguments(t *testing.T) {
	cwd, dir := t.TempDir(), filepath.Join(t.TempDir(), "data")
	r := svcd(t, cwd, nil, "admin", "create", "owner@example.com", "a-long-password-1", "--dir", dir)
	if r.code != 0 || !strings.Contains(r.stdout, "admin owner@example.com created (owner)") {
		t.Fatalf("status %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "data.db")); err != nil {
		t.Errorf("the admin is not in --dir: %v", err)
	}
	if _, err := os.Stat(filepath.Join(cwd, "svc_data")); !os.IsNotExist(err) {
		t.Errorf("./svc_data was used despite --dir after the arguments (%v)", err)
	}
	// Again, flags between the arguments: the admin exists now.
	r = svcd(t, cwd, nil, "admin", "create", "--dir="+dir, "owner@example.com", "a-long-password-1")
	if r.code != 1 || !strings.Contains(r.stderr, "create admin") {
		t.Errorf("second create: status %d, stderr %q", r.code, r.stderr)
	}
}

// TestParseArgs: flags anywhere, one dash or two, "=" or a separate
// value, booleans without one, "--" ends the flags.
func TestParseArgs(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	dir := fs.String("dir", "", "")
	boot := fs.Bool("bootstrap", false, "")
	nodes := fs.Int("nodes", 1, "")
	err := parseArgs(fs, []string{"a", "--dir", "/x", "b", "-bootstrap", "--nodes=3", "--", "--not-a-flag", "-"})
	if err != nil {
		t.Fatal(err)
	}
	if *dir != "/x" || !*boot || *nodes != 3 || !slices.Equal(fs.Args(), []string{"a", "b", "--not-a-flag", "-"}) {
		t.Errorf("dir %q, bootstrap %v, nodes %d, args %q", *dir, *boot, *nodes, fs.Args())
	}
	if err := parseArgs(flag.NewFlagSet("t", flag.ContinueOnError), []string{"x", "--help"}); err != flag.ErrHelp {
		t.Errorf("--help after an argument: %v", err)
	}
}

// TestClosest: typos find their word; unrelated words find nothing.
func TestClosest(t *testing.T) {
	words := []string{"dir", "http", "node-id", "raft-addr", "bootstrap", "join", "nodes", "rebuild-db", "reseed"}
	for in, want := range map[string]string{
		"dri": "dir", "htp": "http", "nodeid": "node-id", "raft-adr": "raft-addr", "bootsrap": "bootstrap",
		"jion": "join", "node": "nodes", "rebuild": "rebuild-db", "boot": "bootstrap",
		"x": "", "zzz": "", "frobnicate": "", "re": "",
	} {
		if got := closest(in, words); got != want {
			t.Errorf("closest(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestVersion: svcd version prints the -ldflags version, then the
// revision, time and modified flag the build stamped (as `go version -m`
// reads them from the same binary) and the Go version.
func TestVersion(t *testing.T) {
	r := svcd(t, "", nil, "version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "svcd "+testVersion+"\n") {
		t.Fatalf("status %d, stdout %q", r.code, r.stdout)
	}
	out, err := exec.Command("go", "version", "-m", svcdBinary(t)).Output()
	if err != nil {
		t.Fatal(err)
	}
	// "(devel)", or a pseudo-version when the build stamped VCS info.
	mod := regexp.MustCompile(`(?m)^\s+mod\s+svcd\s+(\S+)`).FindStringSubmatch(string(out))
	if mod == nil || !strings.Contains(r.stdout, "module:   "+mod[1]+"\n") || !strings.Contains(r.stdout, "go:       "+runtime.Version()+"\n") {
		t.Errorf("go version -m says module %v; svcd version says:\n%s", mod, r.stdout)
	}
	stamped := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^\s+build\s+(vcs\.\w+)=(\S+)$`).FindAllStringSubmatch(string(out), -1) {
		stamped[m[1]] = m[2]
	}
	if rev := stamped["vcs.revision"]; rev != "" {
		want := "revision: " + rev
		if stamped["vcs.modified"] == "true" {
			want += " (modified)"
		}
		if !strings.Contains(r.stdout, want+"\n") || !strings.Contains(r.stdout, "time:     "+stamped["vcs.time"]+"\n") {
			t.Errorf("the build stamped %v; svcd version says:\n%s", stamped, r.stdout)
		}
	} else if !strings.Contains(r.stdout, "revision: unknown") {
		// A git worktree (.git is a file) or -buildvcs=false: no stamp.
		t.Errorf("no VCS stamp, yet svcd version says:\n%s", r.stdout)
	}
	for _, flag := range []string{"--version", "-v"} {
		if r := svcd(t, "", nil, flag); r.code != 0 || !strings.HasPrefix(r.stdout, "svcd "+testVersion) {
			t.Errorf("svcd %s: status %d, stdout %q", flag, r.code, r.stdout)
		}
	}
}

// TestParseBuildInfo: the version and VCS fields come from the build
// info's settings; a release build without -ldflags takes the module's
// version.
func TestParseBuildInfo(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "svcd", Version: "v1.4.2"},
		Settings: []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "3f2a9c1d0e4b5a6978877665544332211aabbccd"},
			{Key: "vcs.time", Value: "2026-11-20T10:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	b := parseBuildInfo("dev", bi)
	want := buildInfo{Version: "v1.4.2", Module: "v1.4.2", Revision: "3f2a9c1d0e4b5a6978877665544332211aabbccd",
		Time: "2026-11-20T10:00:00Z", Modified: true, Go: "go1.26.0"}
	if b != want {
		t.Fatalf("parsed %+v, want %+v", b, want)
	}
	if s := b.short(); s != "v1.4.2 (3f2a9c1d0e4b, 2026-11-20T10:00:00Z, modified)" {
		t.Errorf("short = %q", s)
	}
	if b := parseBuildInfo("v2.0.0", bi); b.Version != "v2.0.0" {
		t.Errorf("-ldflags version lost: %+v", b)
	}
	if b := parseBuildInfo("dev", nil); b.Version != "dev" || b.short() != "dev" {
		t.Errorf("no build info: %+v", b)
	}
	var sb strings.Builder
	b.print(&sb)
	if !strings.Contains(sb.String(), "revision: 3f2a9c1d0e4b5a6978877665544332211aabbccd (modified)\n") {
		t.Errorf("printed:\n%s", sb.String())
	}
}
