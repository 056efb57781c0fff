package jsvm

import (
	"strconv"
	"strings"

	"svcd/engine"
)

// The settings the module reads are the core's (engine/settings.go):
// execution.timeout_ms and hooks.slow_ms. It defines those of the egress
// guard its helpers.http goes through (read by api/egress): empty
// hooks.http.deny is the guard's default denied ranges, empty
// hooks.http.allow allows nothing more.
func (m *Module) registerSettings() {
	m.core.DefineSettings(engine.Defaults(
		"hooks.http.deny", "",
		"hooks.http.allow", "",
	)...)
}

// settingInt is a non-negative integer setting, def when it is not one.
func settingInt(core *engine.Engine, key string, def int64) int64 {
	n, err := strconv.ParseInt(strings.TrimSpace(core.Setting(key)), 10, 64)
	if err != nil || n < 0 {
		return def
	}
	return n
}
