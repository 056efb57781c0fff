package notify

import (
	"strings"

	"svcd/engine"
)

// settingUsers names the auth collection whose users the notification
// collections belong to (their user relation targets it). It is read when
// the collections are created; from then on the relation decides.
const settingUsers = "notifications.users_collection"

func (n *Notifications) registerSettings() {
	defs := engine.Defaults(settingUsers, "users")
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
