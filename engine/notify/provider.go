package notify

import (
	"net/url"
	"strings"
)

// provider is one push provider as the module configures it: its name
// (CONTRACT.md: the settings notifications.providers.<name>.*), its
// settings besides enabled, and what enabling it requires. Each lives in
// its own file (provider_fcm.go, provider_apns.go,
// provider_hostedpush.go).
type provider interface {
	// name is the provider's name in paths, settings and queues.
	name() string
	// members are the provider's settings after
	// notifications.providers.<name>., enabled left out, in the order
	// they are listed.
	members() []member
	// check says what keeps cfg (every member, enabled included) from
	// being enabled, by member name; nil when nothing does.
	check(cfg map[string]string) map[string]string
	// devices reports whether the provider sends to the device tokens
	// users register (fcm, apns), rather than to user ids (hostedpush).
	devices() bool
}

// member is one setting of a provider.
type member struct {
	key string
	def string
	// url: the value, when set, must be an http or https URL.
	url bool
}

// Provider names (CONTRACT.md).
const (
	FCM        = "fcm"
	APNs       = "apns"
	HostedPush = "hostedpush"
)

// providers are the push providers, in the order they are listed.
func providers() []provider {
	return []provider{fcmProvider{}, apnsProvider{}, hostedProvider{}}
}

// providerNamed is provider name, or nil.
func providerNamed(name string) provider {
	for _, p := range providers() {
		if p.name() == name {
			return p
		}
	}
	return nil
}

// Names are the push providers' names.
func Names() []string {
	var out []string
	for _, p := range providers() {
		out = append(out, p.name())
	}
	return out
}

// settingKey is the setting of member m of provider name.
func settingKey(name, m string) string { return "notifications.providers." + name + "." + m }

// memberEnabled is the member every provider has.
const memberEnabled = "enabled"

// required notes in bad each of keys that cfg leaves empty.
func required(cfg map[string]string, bad map[string]string, keys ...string) {
	for _, k := range keys {
		if strings.TrimSpace(cfg[k]) == "" {
			bad[k] = "is required to enable the provider"
		}
	}
}

// validURL reports whether s is an absolute http or https URL.
func validURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// truthy reads a boolean setting value ("1" or "true").
func truthy(v string) bool {
	v = strings.ToLower(strings.TrimSpace(v))
	return v == "1" || v == "true"
}
