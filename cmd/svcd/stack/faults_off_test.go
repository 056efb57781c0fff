//go:build !svcfaults

package stack

import (
	"log/slog"
	"testing"
)

// TestNoFaultsInProductionBuilds: the jepsen suite's defect switches do
// nothing in a build without the svcfaults tag, whatever the environment.
func TestNoFaultsInProductionBuilds(t *testing.T) {
	t.Setenv("SVC_FAULT_ACK_BEFORE_APPLY", "1")
	t.Setenv("SVC_FAULT_LOCAL_READ_INDEX", "1")
	t.Setenv("SVC_FAULT_CLOCK_FILE", "/tmp/x")
	f, clock := faultHooks(slog.Default(), t.TempDir())
	if f.AckBeforeApply || f.LocalReadIndex || clock != nil {
		t.Fatalf("fault hooks active in a production build: %+v, clock %v", f, clock != nil)
	}
}
