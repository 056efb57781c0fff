// Package oauth2 describes the OAuth2 providers svcd signs users in with
// (SPEC.md, Authentication 7; CONTRACT.md's list): each provider's name,
// default endpoints and scopes, whether it forces PKCE, how its token
// endpoint takes the client's credentials, and how what it answers maps to
// an Identity (id, email, whether the provider verified that email, name,
// avatar URL). One provider per file (provider_github.go, ...), the
// catalogue in catalogue.go.
//
// The package speaks no HTTP itself: the engine never imports net/http
// (deps_test.go). The node's OAuth2 client (api/oauth2client) performs
// the token exchange with golang.org/x/oauth2, verifies ID tokens with
// go-oidc, and hands Identify a Source whose Get reaches the provider's
// APIs through the egress guard.
package oauth2

import "context"

// Identity is who the provider says signed in.
type Identity struct {
	// Provider is the provider's name (github, oidc, ...).
	Provider string `json:"provider"`
	// ID is the provider's stable id of the user (the OIDC subject).
	ID string `json:"id"`
	// Email is the address the provider gave ("" when none).
	Email string `json:"email,omitempty"`
	// Verified reports that the provider says it verified Email. An
	// unverified email never merges into an existing account.
	Verified  bool   `json:"verified"`
	Name      string `json:"name,omitempty"`
	Username  string `json:"username,omitempty"`
	AvatarURL string `json:"avatar_url,omitempty"`
}

// AuthStyle is how the token endpoint takes the client id and secret.
type AuthStyle int

const (
	// AuthAuto tries HTTP Basic first, then the form (golang.org/x/oauth2's
	// auto-detection).
	AuthAuto AuthStyle = iota
	// AuthInParams sends client_id and client_secret in the form.
	AuthInParams
	// AuthInHeader sends them as HTTP Basic credentials.
	AuthInHeader
)

// Provider is one provider of the catalogue.
type Provider struct {
	// Name is the lowercase product name, the :provider of the routes and
	// the <provider> of the oauth2.<provider>.* settings.
	Name        string
	DisplayName string
	// AuthURL, TokenURL and UserInfoURL are the real endpoints, the
	// defaults of the settings that override them.
	AuthURL, TokenURL, UserInfoURL string
	// Scopes are the default scopes.
	Scopes []string
	// PKCE: the provider requires PKCE, so every authorization uses it.
	PKCE bool
	// AuthStyle is how the token endpoint authenticates the client.
	AuthStyle AuthStyle
	// IDToken: the token answer carries an ID token that is verified
	// (signature against the issuer's keys, issuer, audience, expiry,
	// nonce) before Identify reads its claims.
	IDToken bool
	// Discovery: the endpoints and keys come from the issuer's OpenID
	// discovery document unless settings name them (oidc).
	Discovery bool
	// Issuer and JWKSURL are the defaults for a provider with IDToken and
	// no discovery (apple).
	Issuer, JWKSURL string
	// Required are the setting keys (after oauth2.<provider>.) that must
	// be set, besides client_id, for the provider to be usable.
	Required []string
	// AuthParams are extra query parameters of the authorization URL.
	AuthParams map[string]string
	// Identify maps what the provider answered to the identity.
	Identify func(ctx context.Context, s *Source) (*Identity, error)
}

// Config is a provider's settings as they stand, endpoints resolved.
type Config struct {
	ClientID     string
	ClientSecret string
	AuthURL      string
	TokenURL     string
	UserInfoURL  string
	Scopes       []string
	// Issuer and JWKSURL verify ID tokens (IDToken providers).
	Issuer  string
	JWKSURL string
	// TeamID, KeyID and PrivateKey (PEM, PKCS #8) sign the client secret
	// of a provider that wants one signed per request (apple).
	TeamID, KeyID, PrivateKey string
}

// Exchange is one code exchange: what the node's client needs to turn an
// authorization code into an identity.
type Exchange struct {
	Provider    *Provider
	Config      Config
	Code        string
	RedirectURI string
	// Verifier is the PKCE code verifier ("" without PKCE).
	Verifier string
	// Nonce is the nonce the authorization URL carried; an ID token must
	// carry the same ("" when the exchange was not begun here).
	Nonce string
}

// Source is what Identify reads: the provider's answers to the exchange.
type Source struct {
	Config Config
	// Claims are the verified ID token's claims, as JSON (nil without an
	// ID token).
	Claims []byte
	// Get fetches url from the provider's API with the access token as a
	// bearer credential and the extra header; an answer that is not 2xx
	// is an error.
	Get func(ctx context.Context, url string, header map[string]string) ([]byte, error)
}
