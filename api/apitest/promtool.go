package apitest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// promtoolHow says how to get promtool (.ci/run does it once per machine).
const promtoolHow = "GOBIN=$HOME/.cache/svcd/bin go install github.com/prometheus/prometheus/cmd/promtool@v0.316.0, or set PROMTOOL_BIN"

// Promtool finds Prometheus's promtool: $PROMTOOL_BIN (the executable or
// the directory holding it), promtool on PATH, or where .ci/run installs
// it ($HOME/.cache/svcd/bin). A missing one skips the test (fails it
// under CI=1, see NeedPeer).
func Promtool(t testing.TB) string {
	t.Helper()
	bin := os.Getenv("PROMTOOL_BIN")
	if fi, err := os.Stat(bin); bin != "" && err == nil && fi.IsDir() {
		bin = filepath.Join(bin, "promtool")
	}
	if fi, err := os.Stat(bin); bin != "" && err == nil && !fi.IsDir() {
		return bin
	}
	if p, err := exec.LookPath("promtool"); err == nil {
		return p
	}
	if home, err := os.UserHomeDir(); err == nil {
		p := filepath.Join(home, ".cache", "svcd", "bin", "promtool")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	NeedPeer(t, "promtool", promtoolHow)
	return ""
}
