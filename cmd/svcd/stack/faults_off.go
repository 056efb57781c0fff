//go:build !svcfaults

package stack

import (
	"log/slog"
	"time"

	"svcd/cluster"
)

// faultHooks is empty in production builds: the deliberate defects of
// faults_on.go exist only in binaries built with the svcfaults tag. The
// engine's clock is the configured one, unchanged (nil: time.Now).
func faultHooks(_ *slog.Logger, _ string, clock func() time.Time) (cluster.Faults, func() time.Time) {
	return cluster.Faults{}, clock
}
