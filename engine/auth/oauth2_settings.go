package auth

import (
	"encoding/json"
	"strings"

	"svcd/engine"
	"svcd/engine/auth/oauth2"
)

// The OAuth2 settings (SPEC.md, Authentication 7; CONTRACT.md): a switch
// for the feature, and per provider oauth2.<provider>.enabled,
// .client_id, .client_secret (sealed at rest like every secret setting),
// the endpoints .auth_url (SPEC.md's .authorization_url is read too),
// .token_url and .userinfo_url defaulting to the provider's real ones,
// .scopes and .display_name; apple's .team_id, .key_id and .private_key;
// oidc's .issuer. Read without being listed: .allowed_redirect_uris (else
// the global oauth2.allowed_redirect_uris), .pkce (1: always PKCE),
// .jwks_url, and apple's .issuer.

// registerOAuth2Settings defines the settings of the catalogue.
func (o *OAuth2) registerOAuth2Settings() {
	defs := engine.Defaults("auth.oauth2.enabled", "1", "oauth2.allowed_redirect_uris", "")
	for _, p := range o.catalogue {
		k := "oauth2." + p.Name + "."
		defs = append(defs, engine.Defaults(
			k+"enabled", "0",
			k+"client_id", "",
			k+"client_secret", "",
			k+"auth_url", p.AuthURL,
			k+"token_url", p.TokenURL,
			k+"userinfo_url", p.UserInfoURL,
			k+"scopes", strings.Join(p.Scopes, " "),
			k+"display_name", p.DisplayName,
		)...)
		for _, r := range p.Required {
			defs = append(defs, engine.SettingDef{Key: k + r}) // .private_key is a secret by its name
		}
	}
	o.au.core.DefineSettings(defs...)
}

// providerSettings is a provider's settings as they stand.
type providerSettings struct {
	p   *oauth2.Provider
	cfg oauth2.Config
	// enabled: oauth2.<provider>.enabled is on. missing names the
	// required settings that are empty (an enabled provider with one is
	// not offered).
	enabled bool
	missing []string
	pkce    bool
	display string
}

// usable reports whether the provider is on and complete.
func (ps *providerSettings) usable() bool { return ps.enabled && len(ps.missing) == 0 }

// settings reads provider name's settings; nil for a name the catalogue
// does not have.
func (o *OAuth2) settings(name string) *providerSettings {
	p := o.byName[name]
	if p == nil {
		return nil
	}
	k := "oauth2." + p.Name + "."
	get := func(key string) string { return strings.TrimSpace(o.au.core.Setting(k + key)) }
	ps := &providerSettings{p: p, enabled: o.au.core.SettingBool(k + "enabled"), display: get("display_name")}
	ps.cfg = oauth2.Config{
		ClientID: get("client_id"), ClientSecret: get("client_secret"),
		AuthURL: get("auth_url"), TokenURL: get("token_url"), UserInfoURL: get("userinfo_url"),
		Scopes: splitList(get("scopes")), Issuer: get("issuer"), JWKSURL: get("jwks_url"),
		TeamID: get("team_id"), KeyID: get("key_id"), PrivateKey: get("private_key"),
	}
	// SPEC.md names the authorization endpoint setting authorization_url:
	// it counts where auth_url is left at its default.
	if alt := get("authorization_url"); alt != "" && ps.cfg.AuthURL == p.AuthURL {
		ps.cfg.AuthURL = alt
	}
	if ps.cfg.Issuer == "" {
		ps.cfg.Issuer = p.Issuer
	}
	if ps.cfg.JWKSURL == "" {
		ps.cfg.JWKSURL = p.JWKSURL
	}
	if ps.display == "" {
		ps.display = p.DisplayName
	}
	ps.pkce = p.PKCE || o.au.core.SettingBool(k+"pkce")
	if ps.cfg.ClientID == "" {
		ps.missing = append(ps.missing, k+"client_id")
	}
	for _, r := range p.Required {
		if get(r) == "" {
			ps.missing = append(ps.missing, k+r)
		}
	}
	if !p.Discovery && (ps.cfg.AuthURL == "" || ps.cfg.TokenURL == "") {
		ps.missing = append(ps.missing, k+"auth_url", k+"token_url")
	}
	return ps
}

// redirectAllowlist is the allowlist that holds for provider name.
func (o *OAuth2) redirectAllowlist(name string) []string {
	if own := strings.TrimSpace(o.au.core.Setting("oauth2." + name + ".allowed_redirect_uris")); own != "" {
		return splitList(own)
	}
	return splitList(o.au.core.Setting("oauth2.allowed_redirect_uris"))
}

// splitList reads a list setting: a JSON array of strings, or values
// separated by commas or white space.
func splitList(s string) []string {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "[") {
		var a []string
		if json.Unmarshal([]byte(s), &a) == nil {
			return a
		}
	}
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r' })
}

// redirectAllowed applies SPEC.md's allowlist: no entries allow every
// URI; an entry is "*", a prefix ending in "*", or an exact URI.
func redirectAllowed(list []string, uri string) bool {
	if len(list) == 0 {
		return true
	}
	for _, e := range list {
		e = strings.TrimSpace(e)
		switch {
		case e == "":
		case e == "*":
			return true
		case strings.HasSuffix(e, "*"):
			if strings.HasPrefix(uri, strings.TrimSuffix(e, "*")) {
				return true
			}
		case e == uri:
			return true
		}
	}
	return false
}
