package oauth2

import "context"

// facebook: the Graph API's /me. Facebook does not say whether the email
// was confirmed, so it is taken as unverified: it never merges into an
// existing account.
func facebook() *Provider {
	return &Provider{
		Name:        "facebook",
		DisplayName: "Facebook",
		AuthURL:     "https://www.facebook.com/v21.0/dialog/oauth",
		TokenURL:    "https://graph.facebook.com/v21.0/oauth/access_token",
		UserInfoURL: "https://graph.facebook.com/me?fields=id,name,email,picture.type(large)",
		Scopes:      []string{"email"},
		AuthStyle:   AuthInParams,
		Identify: func(ctx context.Context, s *Source) (*Identity, error) {
			u, err := s.userInfo(ctx, nil)
			if err != nil {
				return nil, err
			}
			return identity(&Identity{ID: u.str("id"), Email: u.str("email"), Name: u.str("name"),
				AvatarURL: u.str("picture", "data", "url")})
		},
	}
}
