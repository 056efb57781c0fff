package oauth2

import "context"

// oidc: any OpenID Connect provider. The issuer setting names it; its
// discovery document gives the endpoints and keys unless settings name
// them. The identity is the verified ID token's claims, completed by the
// user-info endpoint when there is one (which must name the same
// subject; it never overrides the token's email).
func oidc() *Provider {
	return &Provider{
		Name:        "oidc",
		DisplayName: "OpenID Connect",
		Scopes:      []string{"openid", "profile", "email"},
		IDToken:     true,
		Discovery:   true,
		Required:    []string{"issuer"},
		Identify: func(ctx context.Context, s *Source) (*Identity, error) {
			c, err := s.claims()
			if err != nil {
				return nil, err
			}
			id := standardClaims(c)
			if s.Config.UserInfoURL == "" {
				return identity(id)
			}
			u, err := s.userInfo(ctx, nil)
			if err != nil {
				return nil, err
			}
			if sub := u.str("sub"); sub != id.ID {
				return nil, invalid("the user-info subject %q is not the ID token's", sub)
			}
			more := standardClaims(u)
			if id.Email == "" {
				id.Email, id.Verified = more.Email, more.Verified
			}
			fill(&id.Name, more.Name)
			fill(&id.Username, more.Username)
			fill(&id.AvatarURL, more.AvatarURL)
			return identity(id)
		},
	}
}

// fill sets *dst to src when it is empty.
func fill(dst *string, src string) {
	if *dst == "" {
		*dst = src
	}
}
