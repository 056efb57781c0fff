package pbcompat

import (
	"encoding/json"
	"strings"

	"svcd/engine"
)

// ConsistencySetting is the read consistency of the layer's GET and HEAD
// requests that do not send X-Svc-Consistency: "strong" (the default,
// linearizable) or "local" (svcd's default; api/pbcompat_consistency.go).
const ConsistencySetting = "pocketbase.consistency"

// SettingDefs are the layer's settings, with their defaults and checks.
// The engine's settings are defined before it is sealed, so the node's
// wiring (cmd/svcd/stack) registers these before it builds the HTTP
// layer that reads them.
func SettingDefs() []engine.SettingDef {
	return []engine.SettingDef{
		{Key: EnabledSetting, Default: "1", Validate: validateSwitch},
		{Key: ConsistencySetting, Default: "strong", Validate: validateConsistency},
		{Key: AliasesSetting, Default: "", Validate: validateAliases},
	}
}

// validateAliases accepts "" or a JSON object of strings (alias →
// collection name), what Coll reads.
func validateAliases(v string) string {
	if strings.TrimSpace(v) == "" {
		return ""
	}
	var m map[string]string
	if json.Unmarshal([]byte(v), &m) != nil {
		return "must be a JSON object of collection names"
	}
	return ""
}

// validateSwitch accepts what Enabled reads: 1/0, true/false, on/off,
// yes/no.
func validateSwitch(v string) string {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "0", "true", "false", "on", "off", "yes", "no":
		return ""
	}
	return "must be 1 or 0"
}

// validateConsistency accepts strong and local.
func validateConsistency(v string) string {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "strong", "local":
		return ""
	}
	return `must be "strong" or "local"`
}
