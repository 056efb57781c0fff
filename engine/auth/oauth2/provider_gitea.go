package oauth2

import "context"

// gitea: /api/v1/user of gitea.com, or of a self-hosted Gitea (set the
// three endpoint settings). Its API does not say whether the email was
// confirmed: unverified.
func gitea() *Provider {
	return &Provider{
		Name:        "gitea",
		DisplayName: "Gitea",
		AuthURL:     "https://gitea.com/login/oauth/authorize",
		TokenURL:    "https://gitea.com/login/oauth/access_token",
		UserInfoURL: "https://gitea.com/api/v1/user",
		Scopes:      []string{"read:user", "user:email"},
		AuthStyle:   AuthInParams,
		Identify: func(ctx context.Context, s *Source) (*Identity, error) {
			u, err := s.userInfo(ctx, nil)
			if err != nil {
				return nil, err
			}
			id := &Identity{ID: u.str("id"), Email: u.str("email"), Name: u.str("full_name"),
				Username: u.str("login"), AvatarURL: u.str("avatar_url")}
			if id.Name == "" {
				id.Name = id.Username
			}
			return identity(id)
		},
	}
}
