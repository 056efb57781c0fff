// Package oauth2client is the node's OAuth2 and OpenID Connect client: it
// turns an authorization code into an identity for engine/auth (which
// owns the flow, the state and the accounts, and speaks no HTTP). The
// token exchange is golang.org/x/oauth2's; ID tokens are verified with
// github.com/coreos/go-oidc/v3 (signature against the issuer's keys,
// issuer, audience, expiry; the nonce here); the provider's user-info
// APIs are read with the access token. Every request goes through the
// HTTP client it is given, the egress guard's (api/egress), so provider
// endpoints on private or loopback addresses need hooks.http.allow.
package oauth2client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	xoauth2 "golang.org/x/oauth2"

	"svcd/engine/auth/oauth2"
)

// maxBody bounds what is read of a user-info answer.
const maxBody = 1 << 20

// discoveryTTL is how long an issuer's discovery document is kept.
const discoveryTTL = 10 * time.Minute

// Client exchanges codes with providers. Its caches (discovery documents,
// key sets) belong to the value: two nodes in one process share nothing.
type Client struct {
	http *http.Client
	now  func() time.Time

	mu        sync.Mutex
	providers map[string]discovered
	keys      map[string]*oidc.RemoteKeySet
}

// discovered is an issuer's discovery document as go-oidc read it.
type discovered struct {
	p        *oidc.Provider
	userInfo string
	jwks     string
	at       time.Time
}

// New returns a client that makes its requests with hc (the egress
// guard's client).
func New(hc *http.Client) *Client {
	return &Client{http: hc, now: time.Now, providers: map[string]discovered{}, keys: map[string]*oidc.RemoteKeySet{}}
}

// Discover fills the endpoints cfg leaves empty from the issuer's
// discovery document, for a provider that uses one (oidc).
func (c *Client) Discover(ctx context.Context, p *oauth2.Provider, cfg *oauth2.Config) error {
	if !p.Discovery {
		return nil
	}
	d, err := c.discover(ctx, cfg.Issuer)
	if err != nil {
		return err
	}
	ep := d.p.Endpoint()
	fill(&cfg.AuthURL, ep.AuthURL)
	fill(&cfg.TokenURL, ep.TokenURL)
	fill(&cfg.UserInfoURL, d.userInfo)
	fill(&cfg.JWKSURL, d.jwks)
	return nil
}

func fill(dst *string, v string) {
	if *dst == "" {
		*dst = v
	}
}

// discover reads (or recalls) issuer's discovery document.
func (c *Client) discover(ctx context.Context, issuer string) (discovered, error) {
	if issuer == "" {
		return discovered{}, &oauth2.Error{Kind: oauth2.Misconfigured, Msg: "the issuer setting is empty"}
	}
	c.mu.Lock()
	d, ok := c.providers[issuer]
	c.mu.Unlock()
	if ok && c.now().Sub(d.at) < discoveryTTL {
		return d, nil
	}
	p, err := oidc.NewProvider(oidc.ClientContext(ctx, c.http), issuer)
	if err != nil {
		return discovered{}, &oauth2.Error{Kind: oauth2.Unreachable, Msg: "reading the issuer's discovery document failed", Err: err}
	}
	var meta struct {
		UserInfo string `json:"userinfo_endpoint"`
		JWKS     string `json:"jwks_uri"`
	}
	if err := p.Claims(&meta); err != nil {
		return discovered{}, &oauth2.Error{Kind: oauth2.Misconfigured, Msg: "the discovery document does not parse", Err: err}
	}
	d = discovered{p: p, userInfo: meta.UserInfo, jwks: meta.JWKS, at: c.now()}
	c.mu.Lock()
	c.providers[issuer] = d
	c.mu.Unlock()
	return d, nil
}

// keySet is the (cached) key set at url. Its fetches run on a context of
// their own (the first request's may be gone when the keys rotate), with
// this client's HTTP client.
func (c *Client) keySet(url string) *oidc.RemoteKeySet {
	c.mu.Lock()
	defer c.mu.Unlock()
	ks, ok := c.keys[url]
	if !ok {
		ks = oidc.NewRemoteKeySet(oidc.ClientContext(context.Background(), c.http), url)
		c.keys[url] = ks
	}
	return ks
}

// Exchange turns x's code into the identity of the user who signed in.
func (c *Client) Exchange(ctx context.Context, x *oauth2.Exchange) (*oauth2.Identity, error) {
	p, cfg := x.Provider, x.Config
	if err := c.Discover(ctx, p, &cfg); err != nil {
		return nil, err
	}
	secret := cfg.ClientSecret
	if cfg.PrivateKey != "" {
		s, err := signedClientSecret(cfg, c.now())
		if err != nil {
			return nil, err
		}
		secret = s
	}
	conf := &xoauth2.Config{
		ClientID: cfg.ClientID, ClientSecret: secret, RedirectURL: x.RedirectURI, Scopes: cfg.Scopes,
		Endpoint: xoauth2.Endpoint{AuthURL: cfg.AuthURL, TokenURL: cfg.TokenURL, AuthStyle: authStyle(p.AuthStyle)},
	}
	var opts []xoauth2.AuthCodeOption
	if x.Verifier != "" {
		opts = append(opts, xoauth2.VerifierOption(x.Verifier))
	}
	tok, err := conf.Exchange(context.WithValue(ctx, xoauth2.HTTPClient, c.http), x.Code, opts...)
	if err != nil {
		return nil, exchangeError(err)
	}
	src := &oauth2.Source{Config: cfg, Get: c.getter(tok)}
	if p.IDToken {
		if src.Claims, err = c.verifyIDToken(ctx, p, cfg, tok, x.Nonce); err != nil {
			return nil, err
		}
	}
	id, err := p.Identify(ctx, src)
	if err != nil {
		return nil, err
	}
	id.Provider = p.Name
	return id, nil
}

func authStyle(s oauth2.AuthStyle) xoauth2.AuthStyle {
	switch s {
	case oauth2.AuthInParams:
		return xoauth2.AuthStyleInParams
	case oauth2.AuthInHeader:
		return xoauth2.AuthStyleInHeader
	}
	return xoauth2.AuthStyleAutoDetect
}

// exchangeError classifies a failed token request: the provider's
// refusal (a 4xx with an OAuth2 error) is the client's; anything else is
// the provider being out of reach.
func exchangeError(err error) error {
	var re *xoauth2.RetrieveError
	if errors.As(err, &re) && re.Response != nil && re.Response.StatusCode < 500 {
		return &oauth2.Error{Kind: oauth2.Refused, Code: re.ErrorCode, Msg: "the provider refused the code", Err: err}
	}
	return &oauth2.Error{Kind: oauth2.Unreachable, Msg: "the token request failed", Err: err}
}

// verifyIDToken checks the token answer's ID token and returns its
// claims.
func (c *Client) verifyIDToken(ctx context.Context, p *oauth2.Provider, cfg oauth2.Config, tok *xoauth2.Token, nonce string) ([]byte, error) {
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return nil, &oauth2.Error{Kind: oauth2.Invalid, Msg: "the token answer carries no ID token"}
	}
	conf := &oidc.Config{ClientID: cfg.ClientID, Now: c.now}
	var v *oidc.IDTokenVerifier
	if p.Discovery && !c.jwksOverridden(ctx, cfg) {
		d, err := c.discover(ctx, cfg.Issuer)
		if err != nil {
			return nil, err
		}
		v = d.p.VerifierContext(oidc.ClientContext(context.Background(), c.http), conf)
	} else {
		if cfg.Issuer == "" || cfg.JWKSURL == "" {
			return nil, &oauth2.Error{Kind: oauth2.Misconfigured, Msg: "the issuer or the key set URL is empty"}
		}
		conf.SupportedSigningAlgs = []string{oidc.RS256, oidc.RS384, oidc.RS512, oidc.ES256, oidc.ES384, oidc.ES512, oidc.PS256, oidc.PS384, oidc.PS512, oidc.EdDSA}
		v = oidc.NewVerifier(cfg.Issuer, c.keySet(cfg.JWKSURL), conf)
	}
	idt, err := v.Verify(oidc.ClientContext(ctx, c.http), raw)
	if err != nil {
		return nil, &oauth2.Error{Kind: oauth2.Invalid, Msg: "the ID token does not verify", Err: err}
	}
	if nonce != "" && idt.Nonce != nonce {
		return nil, &oauth2.Error{Kind: oauth2.Invalid, Msg: "the ID token's nonce is not the one sent"}
	}
	var claims json.RawMessage
	if err := idt.Claims(&claims); err != nil {
		return nil, &oauth2.Error{Kind: oauth2.Invalid, Msg: "the ID token's claims do not parse", Err: err}
	}
	return claims, nil
}

// jwksOverridden reports whether cfg names a key set other than the
// discovery document's.
func (c *Client) jwksOverridden(ctx context.Context, cfg oauth2.Config) bool {
	if cfg.JWKSURL == "" {
		return false
	}
	d, err := c.discover(ctx, cfg.Issuer)
	return err == nil && d.jwks != cfg.JWKSURL
}

// getter reads the provider's APIs with the access token.
func (c *Client) getter(tok *xoauth2.Token) func(ctx context.Context, url string, header map[string]string) ([]byte, error) {
	return func(ctx context.Context, url string, header map[string]string) ([]byte, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return nil, &oauth2.Error{Kind: oauth2.Misconfigured, Msg: "the user-info URL does not parse", Err: err}
		}
		req.Header.Set("Accept", "application/json")
		for k, v := range header {
			req.Header.Set(k, v)
		}
		tok.SetAuthHeader(req)
		res, err := c.http.Do(req)
		if err != nil {
			return nil, &oauth2.Error{Kind: oauth2.Unreachable, Msg: "the user-info request failed", Err: err}
		}
		defer res.Body.Close()
		b, err := io.ReadAll(io.LimitReader(res.Body, maxBody))
		if err != nil {
			return nil, &oauth2.Error{Kind: oauth2.Unreachable, Msg: "reading the user-info answer failed", Err: err}
		}
		switch {
		case res.StatusCode >= 500:
			return nil, &oauth2.Error{Kind: oauth2.Unreachable, Msg: fmt.Sprintf("the provider's API answered %d", res.StatusCode)}
		case res.StatusCode >= 300:
			return nil, &oauth2.Error{Kind: oauth2.Invalid, Msg: fmt.Sprintf("the provider's API answered %d", res.StatusCode)}
		}
		return b, nil
	}
}
