package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// testVersion is the -ldflags version of the binary the tests build.
const testVersion = "v9.8.7-test"

// built is the svcd binary of this test process, built once.
var built struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// TestMain removes the binary the tests built.
func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// svcdBinary builds this package into a real binary (once per test
// process): -ldflags sets testVersion, -buildvcs=auto stamps the VCS
// revision when the checkout allows it (whatever GOFLAGS says).
func svcdBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the svcd binary; skipped in -short mode")
	}
	built.once.Do(func() {
		gobin, err := exec.LookPath("go")
		if err != nil {
			built.err = err
			return
		}
		if built.dir, built.err = os.MkdirTemp("", "svcd-cli-test-"); built.err != nil {
			return
		}
		built.path = filepath.Join(built.dir, "svcd")
		cmd := exec.Command(gobin, "build", "-tags", "sqlite_fts5", "-buildvcs=auto",
			"-ldflags", "-X main.version="+testVersion, "-o", built.path, ".")
		if out, err := cmd.CombinedOutput(); err != nil {
			built.err = errors.New(err.Error() + "\n" + string(out))
		}
	})
	if built.err != nil {
		t.Fatalf("build svcd: %v", built.err)
	}
	return built.path
}

// result is what a finished svcd process left.
type result struct {
	code           int
	stdout, stderr string
}

// svcd runs the binary with args in dir (a temporary directory when
// empty) and env added, and waits for it.
func svcd(t *testing.T, dir string, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(svcdBinary(t), args...)
	if dir == "" {
		dir = t.TempDir()
	}
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	case err != nil:
		t.Fatalf("svcd %v: %v", args, err)
	}
	return r
}
