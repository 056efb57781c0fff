package jsvm

import (
	"strconv"
	"strings"

	"svcd/engine"
)

// The settings the module reads are the core's (engine/settings.go):
// execution.timeout_ms, hooks.slow_ms, and the egress guard's
// hooks.http.deny / hooks.http.allow (read by api/egress).

// settingInt is a non-negative integer setting, def when it is not one.
func settingInt(core *engine.Engine, key string, def int64) int64 {
	n, err := strconv.ParseInt(strings.TrimSpace(core.Setting(key)), 10, 64)
	if err != nil || n < 0 {
		return def
	}
	return n
}
