//go:build !svcfaults

package stack

import (
	"log/slog"
	"testing"
	"time"
)

// TestNoFaultsInProductionBuilds: the jepsen suite's defect switches do
// nothing in a build without the svcfaults tag, whatever the environment:
// the engine's clock is the configured one, unchanged.
func TestNoFaultsInProductionBuilds(t *testing.T) {
	t.Setenv("SVC_FAULT_ACK_BEFORE_APPLY", "1")
	t.Setenv("SVC_FAULT_LOCAL_READ_INDEX", "1")
	t.Setenv("SVC_FAULT_CLOCK_FILE", "/tmp/x")
	f, clock := faultHooks(slog.Default(), t.TempDir(), nil)
	if f.AckBeforeApply || f.LocalReadIndex || clock != nil {
		t.Fatalf("fault hooks active in a production build: %+v, clock %v", f, clock != nil)
	}
	at := time.Unix(1000, 0)
	if _, clock := faultHooks(slog.Default(), t.TempDir(), func() time.Time { return at }); clock == nil || !clock().Equal(at) {
		t.Fatal("the configured clock is not the engine's clock")
	}
}
