package notify

import (
	"strconv"
	"strings"

	"svcd/engine"
)

// settingUsers names the auth collection whose users the notification
// collections belong to (their user relation targets it). It is read when
// the collections are created; from then on the relation decides.
const settingUsers = "notifications.users_collection"

// The retry policy of push jobs: how many more runs a failing job gets,
// and the delay before the first (doubling after each).
const (
	settingRetries    = "notifications.push.retries"
	settingRetryDelay = "notifications.push.retry_delay_ms"
)

func (n *Notifications) registerSettings() {
	defs := engine.Defaults(settingUsers, "users", settingRetries, "5", settingRetryDelay, "5000")
	for _, p := range providers() {
		defs = append(defs, engine.SettingDef{Key: settingKey(p.name(), memberEnabled), Default: "0"})
		for _, m := range p.members() {
			defs = append(defs, engine.SettingDef{Key: settingKey(p.name(), m.key), Default: m.def})
		}
	}
	n.core.DefineSettings(defs...)
}

// config is provider p's settings by member name (enabled included),
// secrets opened.
func (n *Notifications) config(p provider) map[string]string {
	cfg := map[string]string{memberEnabled: n.core.Setting(settingKey(p.name(), memberEnabled))}
	for _, m := range p.members() {
		cfg[m.key] = n.core.Setting(settingKey(p.name(), m.key))
	}
	return cfg
}

// enabled reports whether p is switched on.
func (n *Notifications) enabled(p provider) bool {
	return truthy(n.core.Setting(settingKey(p.name(), memberEnabled)))
}

// enabledProviders are the providers switched on, in their order.
func (n *Notifications) enabledProviders() []provider {
	var out []provider
	for _, p := range providers() {
		if n.enabled(p) {
			out = append(out, p)
		}
	}
	return out
}

// usersCollection is the setting naming the users' collection.
func (n *Notifications) usersCollection() string {
	return strings.TrimSpace(n.core.Setting(settingUsers))
}

// retryPolicy is the push jobs' retries and first retry delay (ms), the
// defaults when the settings are malformed.
func (n *Notifications) retryPolicy() (retries, delayMs int64) {
	retries, delayMs = 5, 5000
	if v, err := strconv.ParseInt(strings.TrimSpace(n.core.Setting(settingRetries)), 10, 64); err == nil && v >= 0 && v <= 100 {
		retries = v
	}
	if v, err := strconv.ParseInt(strings.TrimSpace(n.core.Setting(settingRetryDelay)), 10, 64); err == nil && v >= 0 && v <= 86400000 {
		delayMs = v
	}
	return retries, delayMs
}
