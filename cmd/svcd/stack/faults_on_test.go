//go:build svcfaults

package stack

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestFaultClockOverConfiguredClock: the fault build's clock offset is
// added to the configured clock (a test's fake one), not to time.Now;
// without a clock file the engine's clock is the configured one, unchanged.
func TestFaultClockOverConfiguredClock(t *testing.T) {
	dir := t.TempDir()
	at := time.Unix(1000, 0)
	base := func() time.Time { return at }
	t.Setenv("SVC_FAULT_CLOCK_FILE", "")
	if _, clock := faultHooks(slog.Default(), dir, base); clock == nil || !clock().Equal(at) {
		t.Fatal("without a clock file the configured clock is not the engine's clock")
	}
	t.Setenv("SVC_FAULT_CLOCK_FILE", "skew")
	if err := os.WriteFile(filepath.Join(dir, "skew"), []byte("-90s"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, clock := faultHooks(slog.New(slog.DiscardHandler), dir, base)
	if got := clock(); !got.Equal(at.Add(-90 * time.Second)) {
		t.Fatalf("skewed clock %v, want %v", got, at.Add(-90*time.Second))
	}
	at = at.Add(time.Hour)
	if got := clock(); !got.Equal(at.Add(-90 * time.Second)) {
		t.Fatalf("skewed clock after the base moved: %v, want %v", got, at.Add(-90*time.Second))
	}
}
