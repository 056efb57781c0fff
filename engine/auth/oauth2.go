package auth

import (
	"context"
	"errors"

	"svcd/engine"
	"svcd/engine/auth/oauth2"
)

// OAuth2 sign-in (SPEC.md, Authentication 7 and the exchange outcomes;
// docs/auth.md "OAuth2"). The client owns the redirect: it asks for an
// authorization URL (Authorize), sends the user there, and hands the code
// the provider sent back to Exchange, which answers a session (the
// identity is linked to an account, or a new account is made for it) or
// a merge token (a verified email of an existing account: its owner must
// prove the account with MergeConfirm). Unlink removes a link unless it
// is the account's last way to sign in.
//
// Everything that must hold on any node is replicated: an authorization
// (its state, redirect URI, PKCE mode) is stored through the log and
// spent by the first exchange that presents its state, whichever node
// gets it; merge tokens are stored (as keyed hashes) and spent the same
// way; links are decided when the exchange's outcome is applied, so two
// exchanges of one identity cannot both create an account. PKCE
// verifiers and OIDC nonces the node makes are derived from the state
// with a key derived from the signing key: nothing secret is logged.
//
// The module speaks no HTTP (the engine never imports net/http): the
// exchange itself is the OAuth2Client the node passes in
// (api/oauth2client, through the egress guard).

// OAuth2Client performs code exchanges with providers.
type OAuth2Client interface {
	// Discover fills the endpoints cfg leaves empty from the issuer's
	// discovery document (a provider with Discovery).
	Discover(ctx context.Context, p *oauth2.Provider, cfg *oauth2.Config) error
	// Exchange turns a code into the identity of who signed in.
	Exchange(ctx context.Context, x *oauth2.Exchange) (*oauth2.Identity, error)
}

// OAuth2 is the module's OAuth2 service.
type OAuth2 struct {
	au        *Auth
	client    OAuth2Client
	catalogue []*oauth2.Provider
	byName    map[string]*oauth2.Provider
}

// newOAuth2 builds the service over the provider catalogue; client may be
// nil (a node without outbound HTTP: exchanges answer 503).
func newOAuth2(au *Auth, client OAuth2Client) *OAuth2 {
	o := &OAuth2{au: au, client: client, catalogue: oauth2.All(), byName: map[string]*oauth2.Provider{}}
	for _, p := range o.catalogue {
		o.byName[p.Name] = p
	}
	return o
}

// OAuth2 is the module's OAuth2 service.
func (au *Auth) OAuth2() *OAuth2 { return au.oa }

var (
	errOAuth2Unavailable = &engine.Error{Kind: engine.KindUnavailable, Message: "OAuth2 is not available on this node", RetryAfter: 5}
	errBadOAuth2State    = &engine.Error{Kind: engine.KindBadRequest, Message: "Invalid or expired OAuth2 state"}
	errBadMergeToken     = &engine.Error{Kind: engine.KindBadRequest, Message: "Invalid or expired merge token"}
	errImpersonatedLink  = &engine.Error{Kind: engine.KindForbidden, Message: "An impersonation token cannot link OAuth2 identities"}
)

// oauth2Open resolves an auth collection with OAuth2 on, and the provider
// name names: 404 for a collection that is not an auth collection, 422
// with the feature off or a provider that is unknown, off or incomplete.
func (o *OAuth2) oauth2Open(coll, provider string) (*engine.Coll, *providerSettings, error) {
	ci, err := o.au.authCollection(coll)
	if err != nil {
		return nil, nil, err
	}
	if !o.au.authFeature(ci, "oauth2") {
		return nil, nil, errFeatureOff("OAuth2 sign-in")
	}
	if provider == "" {
		return ci, nil, engine.ValidationError(map[string]string{"provider": "cannot be blank"})
	}
	ps := o.settings(provider)
	switch {
	case ps == nil:
		return ci, nil, engine.ValidationError(map[string]string{"provider": "is not a known provider"})
	case !ps.enabled:
		return ci, nil, engine.ValidationError(map[string]string{"provider": "is not enabled"})
	case len(ps.missing) > 0:
		o.au.core.Logger().Warn("oauth2 provider enabled but not configured", "provider", provider, "missing", ps.missing)
		return ci, nil, engine.ValidationError(map[string]string{"provider": "is not configured"})
	}
	return ci, ps, nil
}

// ProviderInfo is one provider of GET /auth/:collection/oauth2/providers.
type ProviderInfo struct {
	Name        string `json:"name"`
	DisplayName string `json:"display_name"`
	// PKCE: every authorization with this provider uses PKCE.
	PKCE bool `json:"pkce"`
}

// Providers lists the providers a user of collection coll can sign in
// with: enabled and configured, in the catalogue's order.
func (o *OAuth2) Providers(_ context.Context, coll string) ([]ProviderInfo, error) {
	ci, err := o.au.authCollection(coll)
	if err != nil {
		return nil, err
	}
	if !o.au.authFeature(ci, "oauth2") {
		return nil, errFeatureOff("OAuth2 sign-in")
	}
	out := []ProviderInfo{}
	for _, p := range o.catalogue {
		if ps := o.settings(p.Name); ps.usable() {
			out = append(out, ProviderInfo{Name: p.Name, DisplayName: ps.display, PKCE: ps.pkce})
		}
	}
	return out, nil
}

// exchangeFailed maps a failed exchange to the client's answer; the
// cause goes to the log.
func (o *OAuth2) exchangeFailed(provider string, err error) error {
	var oe *oauth2.Error
	if !errors.As(err, &oe) {
		o.au.core.Logger().Error("oauth2 exchange failed", "provider", provider, "err", err)
		return &engine.Error{Kind: engine.KindUnavailable, Message: "The OAuth2 provider could not be reached", RetryAfter: 5}
	}
	switch oe.Kind {
	case oauth2.Refused:
		e := &engine.Error{Kind: engine.KindBadRequest, Message: "The OAuth2 provider refused the code"}
		if oe.Code != "" {
			e.Details = map[string]any{"provider_error": oe.Code}
		}
		return e
	case oauth2.Invalid:
		o.au.core.Logger().Warn("oauth2 answer refused", "provider", provider, "err", err)
		return &engine.Error{Kind: engine.KindBadRequest, Message: "The OAuth2 provider's answer could not be verified"}
	case oauth2.Misconfigured:
		o.au.core.Logger().Error("oauth2 provider misconfigured", "provider", provider, "err", err)
		return &engine.Error{Kind: engine.KindUnavailable, Message: "The OAuth2 provider is not configured correctly", RetryAfter: 30}
	}
	o.au.core.Logger().Warn("oauth2 provider unreachable", "provider", provider, "err", err)
	return &engine.Error{Kind: engine.KindUnavailable, Message: "The OAuth2 provider could not be reached", RetryAfter: 5}
}
