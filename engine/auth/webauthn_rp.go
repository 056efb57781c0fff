package auth

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"

	"svcd/engine"
)

// The relying party (SPEC.md Authentication 6) is derived from app.url: its
// host is the relying party id, its origin the one origin a ceremony may
// come from, and the name shown by authenticators is that host too. The
// settings override each part:
//
//   - webauthn.rp_id: the id (a domain: the host of the pages, or a parent
//     domain of it; not an IP address);
//   - webauthn.origins: a comma list of the origins (scheme://host[:port])
//     ceremonies may come from; without it, app.url's origin, else
//     https://<rp_id>;
//   - webauthn.rp_name: the name (default the host of app.url, else "svc").
//
// Neither app.url nor webauthn.rp_id set: passkeys are not configured
// (422). Each origin's host must be the id or below it, as browsers
// require. The settings are read at every ceremony, so a change applies
// to the next one; a passkey stays bound to the id it was made for.

var (
	errNoRelyingParty = &engine.Error{Kind: engine.KindValidation,
		Message: "Passkeys need a relying party: set app.url, or webauthn.rp_id and webauthn.origins"}
	rpIDPattern = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$`)
)

// relyingParty reads the relying party from the settings.
func (pk *Passkeys) relyingParty() (RelyingParty, error) {
	core := pk.au.core
	var appHost, appOrigin string
	if u, err := url.Parse(strings.TrimSpace(core.Setting("app.url"))); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Hostname() != "" {
		appHost, appOrigin = strings.ToLower(u.Hostname()), strings.ToLower(u.Scheme+"://"+u.Host)
	}
	rp := RelyingParty{ID: strings.ToLower(strings.TrimSpace(core.Setting("webauthn.rp_id"))), Timeout: passkeyTicketTTL}
	switch {
	case rp.ID == "" && appHost != "":
		rp.ID = appHost
	case rp.ID == "":
		return rp, errNoRelyingParty
	}
	if !rpIDPattern.MatchString(rp.ID) || net.ParseIP(rp.ID) != nil {
		return rp, misconfigured("the relying party id %q is not a domain (an IP address cannot be one)", rp.ID)
	}
	for _, o := range strings.Split(core.Setting("webauthn.origins"), ",") {
		if o = strings.ToLower(strings.TrimRight(strings.TrimSpace(o), "/")); o != "" {
			rp.Origins = append(rp.Origins, o)
		}
	}
	if len(rp.Origins) == 0 {
		if appOrigin != "" {
			rp.Origins = []string{appOrigin}
		} else {
			rp.Origins = []string{"https://" + rp.ID}
		}
	}
	for _, o := range rp.Origins {
		if err := originUnder(o, rp.ID); err != nil {
			return rp, misconfigured("webauthn.origins: %v", err)
		}
	}
	if rp.Name = strings.TrimSpace(core.Setting("webauthn.rp_name")); rp.Name == "" {
		rp.Name = pk.au.appName()
	}
	return rp, nil
}

func misconfigured(format string, args ...any) error {
	return engine.Errorf(engine.KindValidation, "Passkeys are misconfigured: "+format, args...)
}

// originUnder checks that origin is a scheme://host[:port] whose host is
// id or a subdomain of it.
func originUnder(origin, id string) error {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.User != nil {
		return fmt.Errorf("%q is not an origin (scheme://host[:port])", origin)
	}
	h := strings.ToLower(u.Hostname())
	if h != id && !strings.HasSuffix(h, "."+id) {
		return fmt.Errorf("the host of %q is not %s or below it (webauthn.rp_id)", origin, id)
	}
	return nil
}
