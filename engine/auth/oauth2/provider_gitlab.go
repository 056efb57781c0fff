package oauth2

import "context"

// gitlab: /api/v4/user of gitlab.com or a self-managed GitLab (set the
// three endpoint settings); the email is verified when the account has
// confirmed_at.
func gitlab() *Provider {
	return &Provider{
		Name:        "gitlab",
		DisplayName: "GitLab",
		AuthURL:     "https://gitlab.com/oauth/authorize",
		TokenURL:    "https://gitlab.com/oauth/token",
		UserInfoURL: "https://gitlab.com/api/v4/user",
		Scopes:      []string{"read_user"},
		AuthStyle:   AuthInParams,
		Identify: func(ctx context.Context, s *Source) (*Identity, error) {
			u, err := s.userInfo(ctx, nil)
			if err != nil {
				return nil, err
			}
			return identity(&Identity{ID: u.str("id"), Email: u.str("email"), Verified: u.str("confirmed_at") != "",
				Name: u.str("name"), Username: u.str("username"), AvatarURL: u.str("avatar_url")})
		},
	}
}
