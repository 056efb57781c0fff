package oauth2

import "context"

// apple: Sign in with Apple. No user-info endpoint: the identity is the
// ID token's, verified against Apple's keys. The client secret is a JWT
// the node signs per request with the team's key (team_id, key_id,
// private_key). With the name or email scope Apple answers the redirect
// with a form POST (response_mode=form_post): the client's redirect page
// must accept it. Apple writes email_verified as a string.
func apple() *Provider {
	return &Provider{
		Name:        "apple",
		DisplayName: "Apple",
		AuthURL:     "https://appleid.apple.com/auth/authorize",
		TokenURL:    "https://appleid.apple.com/auth/token",
		Scopes:      []string{"name", "email"},
		AuthStyle:   AuthInParams,
		IDToken:     true,
		Issuer:      "https://appleid.apple.com",
		JWKSURL:     "https://appleid.apple.com/auth/keys",
		Required:    []string{"team_id", "key_id", "private_key"},
		AuthParams:  map[string]string{"response_mode": "form_post"},
		Identify: func(_ context.Context, s *Source) (*Identity, error) {
			c, err := s.claims()
			if err != nil {
				return nil, err
			}
			return identity(&Identity{ID: c.str("sub"), Email: c.str("email"), Verified: c.flag("email_verified")})
		},
	}
}
