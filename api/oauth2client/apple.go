package oauth2client

import (
	"time"

	"github.com/golang-jwt/jwt/v5"

	"svcd/engine/auth/oauth2"
)

// appleSecretTTL is the life of a signed client secret: one request's.
const appleSecretTTL = 5 * time.Minute

// signedClientSecret is the client secret Sign in with Apple wants: a JWT
// (ES256) signed with the team's private key, naming the team (iss), the
// service id (sub) and Apple (aud), with the key's id in its header.
func signedClientSecret(cfg oauth2.Config, now time.Time) (string, error) {
	if cfg.TeamID == "" || cfg.KeyID == "" {
		return "", &oauth2.Error{Kind: oauth2.Misconfigured, Msg: "team_id and key_id must be set with private_key"}
	}
	key, err := jwt.ParseECPrivateKeyFromPEM([]byte(cfg.PrivateKey))
	if err != nil {
		return "", &oauth2.Error{Kind: oauth2.Misconfigured, Msg: "private_key is not a PEM EC private key", Err: err}
	}
	aud := cfg.Issuer
	if aud == "" {
		aud = "https://appleid.apple.com"
	}
	t := jwt.NewWithClaims(jwt.SigningMethodES256, jwt.RegisteredClaims{
		Issuer: cfg.TeamID, Subject: cfg.ClientID, Audience: jwt.ClaimStrings{aud},
		IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(appleSecretTTL)),
	})
	t.Header["kid"] = cfg.KeyID
	s, err := t.SignedString(key)
	if err != nil {
		return "", &oauth2.Error{Kind: oauth2.Misconfigured, Msg: "signing the client secret failed", Err: err}
	}
	return s, nil
}
