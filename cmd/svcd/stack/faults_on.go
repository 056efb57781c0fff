//go:build svcfaults

package stack

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"svcd/cluster"
)

// faultHooks reads the jepsen suite's fault switches from the environment.
// This file is compiled only with the svcfaults build tag (the jepsen
// harness's fault binary), never into a release:
//
//   - SVC_FAULT_ACK_BEFORE_APPLY=1 and SVC_FAULT_LOCAL_READ_INDEX=1 turn on
//     the defects of cluster.Faults, to show the checkers catch them;
//   - SVC_FAULT_CLOCK_FILE names a file (relative to the data directory)
//     holding a Go duration ("-90s")
//     added to the engine's wall clock, base (stack.Config.Clock; nil:
//     time.Now), for record timestamps and token times: clock skew of one
//     process, changeable while it runs.
//
// The clock returned is the engine's: base, unchanged, without a clock
// file.
func faultHooks(log *slog.Logger, dataDir string, base func() time.Time) (cluster.Faults, func() time.Time) {
	f := cluster.Faults{
		AckBeforeApply: os.Getenv("SVC_FAULT_ACK_BEFORE_APPLY") == "1",
		LocalReadIndex: os.Getenv("SVC_FAULT_LOCAL_READ_INDEX") == "1",
	}
	if f.AckBeforeApply || f.LocalReadIndex {
		log.Warn("FAULT BUILD: deliberate consistency defects are on", "ack_before_apply", f.AckBeforeApply, "local_read_index", f.LocalReadIndex)
	}
	path := os.Getenv("SVC_FAULT_CLOCK_FILE")
	if path == "" {
		return f, base
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(dataDir, path)
	}
	log.Warn("FAULT BUILD: wall clock offset read from a file", "file", path)
	if base == nil {
		base = time.Now
	}
	c := &skewClock{path: path, log: log, base: base}
	return f, c.now
}

// skewClock is base plus the offset in a file, re-read at most every
// 100 ms (of real time: base may stand still or jump, as a test's clock
// does); a missing or empty file means no offset.
type skewClock struct {
	path string
	log  *slog.Logger
	base func() time.Time

	mu     sync.Mutex
	offset time.Duration
	read   time.Time
}

func (c *skewClock) now() time.Time {
	now, wall := c.base(), time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if wall.Sub(c.read) >= 100*time.Millisecond {
		c.read = wall
		off := time.Duration(0)
		if b, err := os.ReadFile(c.path); err == nil && len(strings.TrimSpace(string(b))) > 0 {
			d, err := time.ParseDuration(strings.TrimSpace(string(b)))
			if err != nil {
				c.log.Warn("clock offset file", "err", err)
			}
			off = d
		}
		if off != c.offset {
			c.log.Warn("FAULT BUILD: wall clock offset changed", "offset", off.String())
			c.offset = off
		}
	}
	return now.Add(c.offset)
}
