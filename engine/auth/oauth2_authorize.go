package auth

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"net/url"
	"strings"
	"time"

	"svcd/engine"
	"svcd/fsm"
)

// An authorization lives this long between Authorize and Exchange.
const oauth2StateTTL = 10 * time.Minute

// Limits on what a client sends to Authorize.
const (
	maxStateLen       = 512
	maxRedirectURILen = 2048
)

// PKCE modes of an authorization.
const (
	pkceNone   = ""
	pkceServer = "server" // the node's verifier, derived from the state
	pkceClient = "client" // the client's code_challenge; it sends the verifier
)

// AuthorizeRequest is GET /auth/:collection/oauth2/authorize's query.
type AuthorizeRequest struct {
	Provider    string
	RedirectURI string
	// State is the client's; empty: the node draws one.
	State string
	// UsePKCE asks the node to do PKCE (it keeps the verifier).
	UsePKCE bool
	// CodeChallenge is the client's PKCE challenge (S256); the client
	// then sends its code_verifier to Exchange.
	CodeChallenge       string
	CodeChallengeMethod string
}

// Authorization is Authorize's answer: where to send the user, and the
// state the provider will send back with the code.
type Authorization struct {
	AuthorizeURL string `json:"authorize_url"`
	State        string `json:"state"`
}

type oauth2AuthorizeCmd struct {
	Key         string `json:"key"`
	Coll        string `json:"coll"`
	Provider    string `json:"provider"`
	RedirectURI string `json:"redirect_uri"`
	PKCE        string `json:"pkce"`
	Challenge   string `json:"challenge"`
	Exp         int64  `json:"exp"`
	Now         int64  `json:"now"`
}

// Authorize begins a sign-in with in.Provider for collection coll: it
// stores the authorization (through the log, so any node can finish it)
// and answers the provider's authorization URL.
func (o *OAuth2) Authorize(ctx context.Context, coll string, in AuthorizeRequest) (*Authorization, uint64, error) {
	ci, ps, err := o.oauth2Open(coll, in.Provider)
	if err != nil {
		return nil, 0, err
	}
	d := map[string]string{}
	if msg := o.checkRedirect(in.Provider, in.RedirectURI); msg != "" {
		d["redirectUri"] = msg
	}
	state := in.State
	switch {
	case state == "":
		if state, err = randomToken(32); err != nil {
			return nil, 0, err
		}
	case len(state) > maxStateLen || !printable(state):
		d["state"] = "must be at most 512 printable characters"
	}
	mode, challenge := pkceNone, ""
	switch {
	case in.CodeChallenge != "":
		if m := in.CodeChallengeMethod; m != "" && m != "S256" {
			d["code_challenge_method"] = "must be S256"
		}
		if !validChallenge(in.CodeChallenge) {
			d["code_challenge"] = "must be 43 to 128 characters of A-Z, a-z, 0-9, '-', '.', '_', '~'"
		}
		mode, challenge = pkceClient, in.CodeChallenge
	case in.UsePKCE || ps.pkce:
		mode = pkceServer
	}
	if len(d) > 0 {
		return nil, 0, engine.ValidationError(d)
	}
	if o.client == nil {
		return nil, 0, errOAuth2Unavailable
	}
	cfg := ps.cfg
	if err := o.client.Discover(ctx, ps.p, &cfg); err != nil {
		return nil, 0, o.exchangeFailed(ps.p.Name, err)
	}
	key := o.au.macHex(keyOAuth2State, ci.ID, state)
	q := url.Values{}
	for k, v := range ps.p.AuthParams {
		q.Set(k, v)
	}
	q.Set("response_type", "code")
	q.Set("client_id", cfg.ClientID)
	q.Set("redirect_uri", in.RedirectURI)
	if len(cfg.Scopes) > 0 {
		q.Set("scope", strings.Join(cfg.Scopes, " "))
	}
	q.Set("state", state)
	if mode == pkceServer {
		challenge = s256(o.au.macHex(keyOAuth2PKCE, key))
	}
	if mode != pkceNone {
		q.Set("code_challenge", challenge)
		q.Set("code_challenge_method", "S256")
	}
	if ps.p.IDToken {
		q.Set("nonce", o.au.macHex(keyOAuth2Nonce, key))
	}
	now := o.au.core.Now().Unix()
	_, idx, err := o.au.core.Propose(ctx, cmdOAuth2Authorize, oauth2AuthorizeCmd{
		Key: key, Coll: ci.ID, Provider: ps.p.Name, RedirectURI: in.RedirectURI, PKCE: mode, Challenge: challenge,
		Exp: now + int64(oauth2StateTTL/time.Second), Now: now,
	})
	if err != nil {
		return nil, idx, err
	}
	return &Authorization{AuthorizeURL: withQuery(cfg.AuthURL, q), State: state}, idx, nil
}

// applyAuthorize stores an authorization; the same state again replaces
// it (a client that asks twice).
func (o *OAuth2) applyAuthorize(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[oauth2AuthorizeCmd](cmd)
	if err != nil {
		return nil, err
	}
	if _, err := tx.Exec(`DELETE FROM _svc_oauth2_states WHERE expires_at < ?`, c.Now); err != nil {
		return nil, err
	}
	_, err = tx.Exec(`INSERT INTO _svc_oauth2_states (key, coll, provider, redirect_uri, pkce, challenge, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO UPDATE SET coll = excluded.coll, provider = excluded.provider,
		redirect_uri = excluded.redirect_uri, pkce = excluded.pkce, challenge = excluded.challenge, expires_at = excluded.expires_at`,
		c.Key, c.Coll, c.Provider, c.RedirectURI, c.PKCE, c.Challenge, c.Exp)
	return nil, err
}

// checkRedirect validates a redirect URI and applies the allowlist: a
// message for details, "" when it may be used.
func (o *OAuth2) checkRedirect(provider, uri string) string {
	switch u, err := url.Parse(uri); {
	case uri == "":
		return "cannot be blank"
	case len(uri) > maxRedirectURILen || err != nil || u.Scheme == "" || u.Fragment != "":
		return "must be an absolute URI without a fragment"
	case !redirectAllowed(o.redirectAllowlist(provider), uri):
		return "is not in the allowed redirect URIs"
	}
	return ""
}

// withQuery appends q to base, which may have a query of its own.
func withQuery(base string, q url.Values) string {
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	return base + sep + q.Encode()
}

// s256 is PKCE's S256 challenge of verifier.
func s256(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// validChallenge checks a PKCE challenge or verifier (RFC 7636).
func validChallenge(s string) bool {
	if len(s) < 43 || len(s) > 128 {
		return false
	}
	for _, r := range s {
		if !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune("-._~", r)) {
			return false
		}
	}
	return true
}

// printable reports whether s has no control characters.
func printable(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}
