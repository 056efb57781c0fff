// Package harness starts and drives real svcd processes for the jepsen
// tests: it builds the binary once per test process, runs each node as a
// child process on a loopback port, injects process faults (SIGKILL,
// SIGTERM) and speaks to the nodes over their public HTTP API only. It
// imports nothing of svcd's own packages, so what it tests is exactly what
// a user runs.
//
// A Node is one svcd process; a Cluster (StartCluster) is N Nodes forming
// one Raft cluster on loopback (cluster flags through Node.Args, faults per
// node), with a shared admin token. With ClusterOptions.Netns each node
// has its own network namespace (Network), whose links can be cut, made
// lossy or slowed, and Regions gives them region-like round trips.
package harness

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// BinEnv names an environment variable that, when set, points at a
// prebuilt svcd binary to use instead of building one.
const BinEnv = "JEPSEN_SVCD_BIN"

// FaultTag is the build tag of the fault binary (BuildFaultBinary): svcd
// plus the deliberate-defect and clock-skew switches of
// cmd/svcd/stack/faults_on.go, inert unless their SVC_FAULT_* variables
// are set.
const FaultTag = "svcfaults"

type built struct {
	once sync.Once
	dir  string // temp dir holding the built binary (removed by RemoveBinary)
	path string
	err  error
}

var builds struct {
	mu    sync.Mutex
	byTag map[string]*built
}

// BuildBinary returns the path of an svcd binary built from this checkout
// (`go build -tags sqlite_fts5 svcd/cmd/svcd`, run in the module root). It
// builds at most once per test process; later calls reuse the result.
func BuildBinary(t testing.TB) string {
	t.Helper()
	return buildOnce(t, "", os.Getenv(BinEnv))
}

// BuildFaultBinary is BuildBinary with the FaultTag build tag.
func BuildFaultBinary(t testing.TB) string {
	t.Helper()
	return buildOnce(t, FaultTag, "")
}

func buildOnce(t testing.TB, tag, prebuilt string) string {
	t.Helper()
	builds.mu.Lock()
	if builds.byTag == nil {
		builds.byTag = map[string]*built{}
	}
	b := builds.byTag[tag]
	if b == nil {
		b = &built{}
		builds.byTag[tag] = b
	}
	builds.mu.Unlock()
	b.once.Do(func() {
		if prebuilt != "" {
			b.path, b.err = filepath.Abs(prebuilt)
			return
		}
		b.dir, b.path, b.err = buildSvcd(tag)
	})
	if b.err != nil {
		t.Fatalf("build svcd: %v", b.err)
	}
	return b.path
}

// RemoveBinary deletes the directories the builds went into. Call it from
// TestMain after m.Run; it is a no-op when nothing was built.
func RemoveBinary() {
	builds.mu.Lock()
	defer builds.mu.Unlock()
	for _, b := range builds.byTag {
		if b.dir != "" {
			os.RemoveAll(b.dir)
		}
	}
}

func buildSvcd(tag string) (dir, bin string, err error) {
	root, err := ModuleRoot()
	if err != nil {
		return "", "", err
	}
	dir, err = os.MkdirTemp("", "svcd-jepsen-bin-")
	if err != nil {
		return "", "", err
	}
	bin = filepath.Join(dir, "svcd")
	gobin, err := exec.LookPath("go")
	if err != nil {
		os.RemoveAll(dir)
		return "", "", fmt.Errorf("go command not found: %w", err)
	}
	tags := "sqlite_fts5"
	if tag != "" {
		tags += "," + tag
	}
	cmd := exec.Command(gobin, "build", "-tags", tags, "-o", bin, "svcd/cmd/svcd")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return "", "", fmt.Errorf("%v in %s:\n%s", err, root, out)
	}
	return dir, bin, nil
}

// ModuleRoot walks up from the working directory to the directory holding
// go.mod.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}
