package oauth2

import "context"

// github: /user for the account, /user/emails for the primary email and
// whether GitHub verified it (the profile's public email says nothing of
// that, and is often empty).
func github() *Provider {
	return &Provider{
		Name:        "github",
		DisplayName: "GitHub",
		AuthURL:     "https://github.com/login/oauth/authorize",
		TokenURL:    "https://github.com/login/oauth/access_token",
		UserInfoURL: "https://api.github.com/user",
		Scopes:      []string{"read:user", "user:email"},
		AuthStyle:   AuthInParams,
		Identify: func(ctx context.Context, s *Source) (*Identity, error) {
			h := map[string]string{"Accept": "application/vnd.github+json"}
			u, err := s.userInfo(ctx, h)
			if err != nil {
				return nil, err
			}
			id := &Identity{ID: u.str("id"), Name: u.str("name"), Username: u.str("login"), AvatarURL: u.str("avatar_url")}
			if id.Name == "" {
				id.Name = id.Username
			}
			emails, err := s.fetchList(ctx, withSubpath(s.Config.UserInfoURL, "emails"), "emails", h)
			if err != nil {
				return nil, err
			}
			for _, e := range emails {
				if e.flag("primary") {
					id.Email, id.Verified = e.str("email"), e.flag("verified")
				}
			}
			if id.Email == "" {
				id.Email = u.str("email") // public, and not known to be verified
			}
			return identity(id)
		},
	}
}
