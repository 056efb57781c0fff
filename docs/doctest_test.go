// Package docs holds the doc test: every ```sh block of README.md and
// docs/*.md runs against a fresh svcd node (three for docs/cluster.md),
// and what each command answers is checked against the `# =>` lines the
// doc shows. The convention is in docs/README.md.
package docs

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// setups says, per doc, what it runs against when that is not one fresh
// node with the default environment. Each doc says the same in its text.
var setups = map[string]setup{
	"docs/api.md":           {env: []string{"SVC_SETUP_KEY=my-setup-key"}},
	"docs/cluster.md":       {cluster: true},
	"docs/rate-limiting.md": {env: []string{"SVC_TRUSTED_PROXIES=127.0.0.1"}},
}

// docFiles lists README.md and docs/*.md, as paths from the module root.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md"}
	md, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range md {
		files = append(files, "docs/"+f)
	}
	sort.Strings(files[1:])
	return files
}

// TestDocs runs every example of README.md and docs/*.md (see
// docs/README.md for the convention): each file against its own fresh
// node, its blocks in order in one bash session.
func TestDocs(t *testing.T) {
	if testing.Short() {
		t.Skip("starts svcd nodes")
	}
	for _, tool := range []string{"bash", "curl", "jq", "oathtool", "go", "node"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("the doc test needs %s (.ci/run installs it)", tool)
			}
			t.Skipf("the doc test needs %s", tool)
		}
	}
	files := docFiles(t)
	for name := range setups {
		if !contains(files, name) {
			t.Errorf("setups names %s, which is not a doc", name)
		}
	}
	bin := buildSvcd(t)
	for _, name := range files {
		t.Run(strings.TrimSuffix(name, ".md"), func(t *testing.T) {
			t.Parallel()
			runDocFile(t, bin, name)
		})
	}
}

// runDocFile parses one doc, reports its convention problems, and runs
// its blocks against fresh nodes.
func runDocFile(t *testing.T, bin, name string) {
	text, err := os.ReadFile(filepath.Join("..", name))
	if err != nil {
		t.Fatal(err)
	}
	d := parseDoc(name, string(text))
	for _, p := range d.problems {
		t.Errorf("%s:%d: %s", name, p.line, p.msg)
	}
	runnable := false
	for _, b := range d.blocks {
		runnable = runnable || b.skip == "" && len(b.segments) > 0
	}
	if !runnable {
		return
	}
	dir := t.TempDir()
	nodes := startSetup(t, bin, dir, setups[name])
	work := filepath.Join(dir, "work")
	tmp := filepath.Join(dir, "tmp")
	for _, d := range []string{work, tmp} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s, err := startSession(work, tmp, baseEnv(bin, work))
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	fails := runDoc(d, s, substituter(nodes))
	for _, f := range fails {
		t.Error(f)
	}
	if len(fails) > 0 {
		for _, n := range nodes {
			t.Logf("node %s at %s (localhost:%s in the doc); the end of its log:\n%s", n.id, n.addr, n.docPort, logTail(n.log, 15))
		}
	}
}

// logTail returns the last n lines of a file.
func logTail(path string, n int) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
