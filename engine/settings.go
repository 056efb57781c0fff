package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"svcd/fsm"
)

// SettingDef is a documented runtime setting (SPEC.md's configuration
// table): its default, and whether its value is a secret (sealed under the
// encryption key, masked in listings). Keys nobody registered may be
// stored too; a key is also secret when its name says so (secretSuffixes).
type SettingDef struct {
	Key     string
	Default string
	Secret  bool
	// Validate, when set, checks a value before it is stored: a message
	// refuses it (422 with the message under the key), "" accepts it. The
	// empty value (the default restored) is not checked.
	Validate func(v string) string
}

// DefineSettings registers settings with their defaults.
func (e *Engine) DefineSettings(defs ...SettingDef) {
	for _, d := range defs {
		e.reg.mustOpen("setting " + d.Key)
		if e.reg.settings == nil {
			e.reg.settings = map[string]SettingDef{}
		}
		if _, dup := e.reg.settings[d.Key]; dup {
			panic("engine: setting " + d.Key + " defined twice")
		}
		e.reg.settings[d.Key] = d
	}
}

// defaults maps setting keys to defaults, for DefineSettings.
func Defaults(kv ...string) []SettingDef {
	out := make([]SettingDef, 0, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, SettingDef{Key: kv[i], Default: kv[i+1]})
	}
	return out
}

// registerCoreSettings defines the settings the core and the HTTP layer
// read, and those of features whose modules are not built yet (mail,
// storage, jobs), so that they are listed and validated.
func (e *Engine) registerCoreSettings() {
	e.DefineSettings(Defaults(
		"app.url", "",
		"docs.enabled", "1",
		"cors.origins", "",
		"cors.credentials", "0",
		"cors.methods", "",
		"cors.headers", "",
		"cors.max_age", "600",
		"security.trusted_proxies", "",
		"mail.transport", "smtp",
		"mail.http.url", "",
		"smtp.enabled", "0",
		"smtp.port", "587",
		"storage.driver", "local",
		"s3.region", "auto",
		"storage.redirect_downloads", "0",
		"realtime.retention_sec", "30",
		"execution.timeout_ms", "5000",
		"hooks.slow_ms", "1000",
		"queues.visibility_timeout_sec", "300",
		"rate_limit.enabled", "1",
		"metrics.enabled", "0",
		"otel.service_name", "svc",
		"update_check.enabled", "1",
		"update_check.url", "",
		"http.max_body_bytes", "16777216",
		"http.anonymous_body_budget_bytes", "67108864",
	)...)
	// otel.headers usually carries the collector's credentials
	// (Authorization=..., x-api-key=...): masked and sealed like the
	// other secrets.
	e.DefineSettings(SettingDef{Key: "otel.endpoint"}, SettingDef{Key: "otel.headers", Secret: true})
}

// secretSuffixes mark settings whose values are secrets (SPEC.md).
var secretSuffixes = []string{
	".password", ".pass", ".secret", ".client_secret", ".api_key", ".apikey", ".token",
	".private_key", ".privatekey", ".access_key", ".accesskey", ".service_account",
	".secret_access_key", ".access_key_id",
}

// IsSecretSetting reports whether key holds a secret: registered as one,
// or named like one.
func (e *Engine) IsSecretSetting(key string) bool {
	if e.reg.settings[key].Secret {
		return true
	}
	for _, s := range secretSuffixes {
		if strings.HasSuffix(key, s) {
			return true
		}
	}
	return false
}

// SecretMask replaces secret values in listings.
const SecretMask = "********"

// Setting returns the stored value of key, or its default.
func (e *Engine) Setting(key string) string {
	if v, ok := (*e.settings.Load())[key]; ok {
		return v
	}
	return e.reg.settings[key].Default
}

// SettingBool reads a boolean setting ("1"/"true" are true).
func (e *Engine) SettingBool(key string) bool {
	v := strings.ToLower(strings.TrimSpace(e.Setting(key)))
	return v == "1" || v == "true"
}

// Settings returns every known and stored setting; secrets are masked
// unless reveal.
func (e *Engine) Settings(reveal bool) map[string]string {
	out := make(map[string]string, len(e.reg.settings))
	for k, d := range e.reg.settings {
		out[k] = d.Default
	}
	for k, v := range *e.settings.Load() {
		out[k] = v
	}
	if !reveal {
		for k, v := range out {
			if v != "" && e.IsSecretSetting(k) {
				out[k] = SecretMask
			}
		}
	}
	return out
}

type settingsPatchCmd struct {
	Set   map[string]string `json:"set,omitempty"`
	Unset []string          `json:"unset,omitempty"`
}

// maxSettingKey and maxSettingValue bound one setting.
const (
	maxSettingKey   = 200
	maxSettingValue = 64 << 10
)

// PatchSettings stores the given keys: a string, number or boolean sets the
// value (as a string), null restores the default. A masked secret sent back
// unchanged is left alone.
func (e *Engine) PatchSettings(ctx context.Context, body []byte) (map[string]string, uint64, error) {
	var in map[string]any
	if err := decodeStrict(body, &in); err != nil {
		return nil, 0, err
	}
	if in == nil {
		return nil, 0, Errorf(KindBadRequest, "Expected a JSON object of setting keys")
	}
	cmd := settingsPatchCmd{Set: map[string]string{}}
	d := map[string]string{}
	keys := make([]string, 0, len(in))
	for k := range in {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k == "" || len(k) > maxSettingKey || strings.ContainsAny(k, " \t\r\n") {
			d[k] = "invalid key"
			continue
		}
		switch v := in[k].(type) {
		case nil:
			cmd.Unset = append(cmd.Unset, k)
		case string:
			if v == SecretMask && e.IsSecretSetting(k) {
				continue
			}
			if len(v) > maxSettingValue {
				d[k] = "value too long"
				continue
			}
			cmd.Set[k] = v
		case bool:
			cmd.Set[k] = map[bool]string{true: "1", false: "0"}[v]
		case json.Number:
			cmd.Set[k] = v.String()
		default:
			d[k] = "must be a string, number, boolean or null"
		}
	}
	if len(d) > 0 {
		return nil, 0, ValidationError(d)
	}
	if msg := e.validateSettingValues(cmd.Set); len(msg) > 0 {
		return nil, 0, ValidationError(msg)
	}
	for k, v := range cmd.Set {
		sealed, err := e.sealSetting(k, v)
		if err != nil {
			return nil, 0, Errorf(KindInternal, "could not encrypt %s", k)
		}
		cmd.Set[k] = sealed
	}
	_, idx, err := e.Propose(ctx, cmdSettingsPatch, cmd)
	if err != nil {
		return nil, idx, err
	}
	return e.Settings(false), idx, nil
}

// validateSettingValues checks the values of settings whose form is known.
func (e *Engine) validateSettingValues(set map[string]string) map[string]string {
	d := map[string]string{}
	for k, v := range set {
		if sd, known := e.reg.settings[k]; known && sd.Validate != nil && v != "" {
			if msg := sd.Validate(v); msg != "" {
				d[k] = msg
				continue
			}
		}
		if sd, known := e.reg.settings[k]; known && isNumeric(sd.Default) && v != "" && !isNumeric(v) {
			def := sd.Default
			if def == "0" || def == "1" {
				if lv := strings.ToLower(v); lv == "true" || lv == "false" {
					continue
				}
			}
			d[k] = "must be a number"
		}
	}
	return d
}

func isNumeric(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if (r < '0' || r > '9') && !(i == 0 && r == '-') {
			return false
		}
	}
	return true
}

func (e *Engine) applySettingsPatch(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := decodeCmd[settingsPatchCmd](cmd)
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(c.Set))
	for k := range c.Set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, err := tx.Exec(`INSERT INTO _svc_settings (key, value) VALUES (?, ?)
			ON CONFLICT (key) DO UPDATE SET value = excluded.value`, k, c.Set[k]); err != nil {
			return nil, err
		}
	}
	for _, k := range c.Unset {
		if _, err := tx.Exec(`DELETE FROM _svc_settings WHERE key = ?`, k); err != nil {
			return nil, err
		}
	}
	tx.Emit(fsm.Event{Kind: EvSettings})
	return nil, nil
}

func (e *Engine) reloadSettings(ctx context.Context) error {
	m := map[string]string{}
	err := e.store.View(ctx, func(r *fsm.Reader) error {
		rows, err := r.Query(`SELECT key, value FROM _svc_settings`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var k, v string
			if err := rows.Scan(&k, &v); err != nil {
				return err
			}
			m[k] = e.openSetting(k, v)
		}
		return rows.Err()
	})
	if err != nil {
		return fmt.Errorf("engine: load settings: %w", err)
	}
	e.settings.Store(&m)
	return nil
}
