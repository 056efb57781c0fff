//go:build !svcfaults

package stack

import (
	"log/slog"
	"time"

	"svcd/cluster"
)

// faultHooks is empty in production builds: the deliberate defects of
// faults_on.go exist only in binaries built with the svcfaults tag.
func faultHooks(*slog.Logger, string) (cluster.Faults, func() time.Time) {
	return cluster.Faults{}, nil
}
