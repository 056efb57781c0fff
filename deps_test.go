package svcd_test

import (
	"bytes"
	"os/exec"
	"sort"
	"strings"
	"testing"
)

// The package layering of DESIGN.md ("Packages"), checked on the real
// import graph as `go list -deps` reports it.

// goTool finds the go command that runs this test.
func goTool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("go command not found: %v", err)
	}
	return p
}

// listDeps runs `go list -deps -tags sqlite_fts5` for the packages matching
// pattern. With tests set, test variants (and the imports of _test.go
// files) are included.
func listDeps(t *testing.T, pattern string, tests bool) (roots []string, g map[string][]string) {
	t.Helper()
	args := []string{"list", "-deps", "-tags", "sqlite_fts5"}
	if tests {
		args = append(args, "-test")
	}
	args = append(args, "-f", `{{.ImportPath}}{{if not .DepOnly}} ROOT{{end}}{{range .Imports}} {{.}}{{end}}`, pattern)
	cmd := exec.Command(goTool(t), args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	g = map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line == "" {
			continue
		}
		// Test variants look like "svcd/fsm [svcd/fsm.test]": keep the
		// bracketed part with the path so variants stay distinct nodes.
		path, rest := splitPath(line)
		fields := strings.Fields(rest)
		if len(fields) > 0 && fields[0] == "ROOT" {
			roots = append(roots, path)
			fields = fields[1:]
		}
		g[path] = joinVariants(fields)
	}
	return roots, g
}

// splitPath separates "path [variant] rest" into the node name and the rest.
func splitPath(line string) (string, string) {
	name, rest, _ := strings.Cut(line, " ")
	if strings.HasPrefix(rest, "[") {
		if i := strings.Index(rest, "]"); i >= 0 {
			name += " " + rest[:i+1]
			rest = rest[i+1:]
		}
	}
	return name, strings.TrimSpace(rest)
}

// joinVariants re-attaches "[variant]" tokens split off by strings.Fields.
func joinVariants(fields []string) []string {
	var out []string
	for _, f := range fields {
		if strings.HasPrefix(f, "[") && len(out) > 0 {
			out[len(out)-1] += " " + f
			continue
		}
		out = append(out, f)
	}
	return out
}

// basePath strips test-variant decorations: "svcd/x [svcd/x.test]",
// "svcd/x.test" and "svcd/x_test" are all svcd/x.
func basePath(p string) string {
	p, _, _ = strings.Cut(p, " ")
	return strings.TrimSuffix(strings.TrimSuffix(p, ".test"), "_test")
}

// chain returns the import path from root to target, as "a -> b -> c".
func chain(g map[string][]string, root, target string) string {
	prev := map[string]string{root: ""}
	queue := []string{root}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		if cur == target {
			var path []string
			for p := cur; p != ""; p = prev[p] {
				path = append(path, p)
			}
			for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
				path[i], path[j] = path[j], path[i]
			}
			return strings.Join(path, " -> ")
		}
		for _, next := range g[cur] {
			if _, ok := prev[next]; !ok {
				prev[next] = cur
				queue = append(queue, next)
			}
		}
	}
	return root + " -> ... -> " + target
}

// reachable is the dependency closure of root in g.
func reachable(g map[string][]string, root string) map[string]bool {
	seen := map[string]bool{root: true}
	stack := []string{root}
	for len(stack) > 0 {
		cur := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, next := range g[cur] {
			if !seen[next] {
				seen[next] = true
				stack = append(stack, next)
			}
		}
	}
	return seen
}

// checkLayer lists the packages matching pattern and fails for every
// dependency that forbidden reports, naming the offending import and the
// chain that pulls it in.
func checkLayer(t *testing.T, pattern string, tests bool, forbidden func(dep string) bool) {
	t.Helper()
	roots, g := listDeps(t, pattern, tests)
	if len(roots) == 0 {
		t.Fatalf("pattern %s matched no packages", pattern)
	}
	for _, root := range roots {
		var bad []string
		for dep := range reachable(g, root) {
			if dep != root && basePath(dep) != basePath(root) && forbidden(basePath(dep)) {
				bad = append(bad, dep)
			}
		}
		sort.Strings(bad)
		for _, dep := range bad {
			t.Errorf("%s must not import %s; import chain: %s", basePath(root), basePath(dep), chain(g, root, dep))
		}
	}
}

func isPkg(dep string, pkgs ...string) bool {
	for _, p := range pkgs {
		if dep == p || strings.HasPrefix(dep, p+"/") {
			return true
		}
	}
	return false
}

func TestImportLayers(t *testing.T) {
	t.Run("fsm", func(t *testing.T) {
		// The state machine knows nothing of the domain, HTTP or consensus,
		// in its tests too: it never sees hashicorp/raft (cluster adapts
		// raft's log to it).
		checkLayer(t, "svcd/fsm", true, func(dep string) bool {
			return dep == "net/http" || isPkg(dep, "svcd/engine", "svcd/api", "svcd/cluster", "github.com/hashicorp/raft")
		})
	})
	t.Run("engine", func(t *testing.T) {
		// The domain reaches the log only through its Proposer interface.
		checkLayer(t, "svcd/engine/...", false, func(dep string) bool {
			return dep == "net/http" || isPkg(dep, "svcd/api", "svcd/cluster", "svcd/realtime", "svcd/scheduler", "svcd/cmd")
		})
	})
	t.Run("engine core and modules", func(t *testing.T) {
		modules, libs := engineModules(t)
		if len(modules) < 4 {
			t.Fatalf("engine modules = %v; want at least auth, csv, history, search", modules)
		}
		isModule := func(dep string) bool { return modules[dep] }
		// The core never imports a module, in its tests neither: it knows
		// modules only through the registries they fill and the
		// interfaces it declares (Searcher).
		checkLayer(t, "svcd/engine", true, isModule)
		// A module never imports another module; a consumer declares an
		// interface and the composition root wires the two.
		for m := range modules {
			checkLayer(t, m, true, func(dep string) bool { return dep != m && isModule(dep) })
		}
		// The libraries under engine/ (schema, filter, token, ...) are
		// leaves of the domain: neither the core nor a module.
		for l := range libs {
			checkLayer(t, l, true, func(dep string) bool { return dep == "svcd/engine" || isModule(dep) })
		}
	})
	t.Run("internal", func(t *testing.T) {
		// The shared helpers under internal/ (progress reporting) are
		// leaves: the state machine and the engine's modules use them, so
		// they import nothing of svcd.
		checkLayer(t, "svcd/internal/...", true, func(dep string) bool {
			return isPkg(dep, "svcd") && !isPkg(dep, "svcd/internal")
		})
	})
	t.Run("cluster", func(t *testing.T) {
		checkLayer(t, "svcd/cluster/...", false, func(dep string) bool {
			return isPkg(dep, "svcd/engine", "svcd/api")
		})
	})
	t.Run("realtime", func(t *testing.T) {
		modules, _ := engineModules(t)
		// The hub sees record changes and principals of the core, and the
		// auth module only through its Credentials interface.
		checkLayer(t, "svcd/realtime/...", true, func(dep string) bool {
			return isPkg(dep, "svcd/api", "svcd/cluster", "svcd/cmd", "svcd/scheduler") || modules[dep]
		})
	})
	t.Run("scheduler", func(t *testing.T) {
		modules, _ := engineModules(t)
		// Leader-only loops drive the node and the domain through the
		// interfaces they declare.
		checkLayer(t, "svcd/scheduler/...", true, func(dep string) bool {
			return isPkg(dep, "svcd/api", "svcd/cluster", "svcd/cmd", "svcd/realtime") || modules[dep]
		})
	})
	t.Run("svcbench", func(t *testing.T) {
		// The load generator is a client of the HTTP API only.
		checkLayer(t, "svcd/cmd/svcbench", false, func(dep string) bool {
			return isPkg(dep, "svcd") && !isPkg(dep, "svcd/cmd/svcbench")
		})
		// Its tests host the node they measure in process: through the
		// composition root and the HTTP layer, never the domain's insides.
		roots, g := listDeps(t, "svcd/cmd/svcbench", true)
		for _, root := range roots {
			for _, dep := range g[root] {
				d := basePath(dep)
				if isPkg(d, "svcd") && !isPkg(d, "svcd/cmd/svcbench", "svcd/cmd/svcd/stack", "svcd/api", "svcd/engine/password") {
					t.Errorf("%s imports %s; svcbench's tests reach the node only through stack and api", root, d)
				}
			}
		}
	})
	t.Run("jepsen", func(t *testing.T) {
		// The harness speaks to real svcd processes over HTTP only, in its
		// test files too.
		roots, _ := listDeps(t, "svcd/jepsen/...", true)
		if len(roots) == 0 {
			t.Skip("no Go package under jepsen/ yet")
		}
		checkLayer(t, "svcd/jepsen/...", true, func(dep string) bool {
			return isPkg(dep, "svcd") && !isPkg(dep, "svcd/jepsen")
		})
	})
}

// engineModules sorts the packages under engine/ into modules (they
// import the core, to register on it) and libraries (they do not).
func engineModules(t *testing.T) (modules, libs map[string]bool) {
	t.Helper()
	roots, g := listDeps(t, "svcd/engine/...", false)
	modules, libs = map[string]bool{}, map[string]bool{}
	for _, r := range roots {
		if r == "svcd/engine" {
			continue
		}
		if importsCore(g[r]) {
			modules[r] = true
		} else {
			libs[r] = true
		}
	}
	return modules, libs
}

func importsCore(deps []string) bool {
	for _, d := range deps {
		if basePath(d) == "svcd/engine" {
			return true
		}
	}
	return false
}

// TestImportCheckerSeesViolations makes sure the checker itself works: the
// api package does import the engine and net/http.
func TestImportCheckerSeesViolations(t *testing.T) {
	roots, g := listDeps(t, "svcd/api", false)
	if len(roots) != 1 || roots[0] != "svcd/api" {
		t.Fatalf("roots = %v, want [svcd/api]", roots)
	}
	for _, want := range []string{"net/http", "svcd/engine", "svcd/fsm"} {
		if _, ok := g[want]; !ok {
			t.Errorf("go list -deps svcd/api does not list %s", want)
		}
	}
	if c := chain(g, "svcd/api", "svcd/fsm"); !strings.HasPrefix(c, "svcd/api -> ") || !strings.HasSuffix(c, " -> svcd/fsm") {
		t.Errorf("chain(api, fsm) = %q", c)
	}
}
