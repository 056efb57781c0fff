package oauth2

import "context"

// spotify: /v1/me. Spotify does not say whether the email was confirmed:
// unverified.
func spotify() *Provider {
	return &Provider{
		Name:        "spotify",
		DisplayName: "Spotify",
		AuthURL:     "https://accounts.spotify.com/authorize",
		TokenURL:    "https://accounts.spotify.com/api/token",
		UserInfoURL: "https://api.spotify.com/v1/me",
		Scopes:      []string{"user-read-private", "user-read-email"},
		AuthStyle:   AuthInHeader,
		Identify: func(ctx context.Context, s *Source) (*Identity, error) {
			u, err := s.userInfo(ctx, nil)
			if err != nil {
				return nil, err
			}
			id := &Identity{ID: u.str("id"), Email: u.str("email"), Name: u.str("display_name")}
			if imgs := u.list("images"); len(imgs) > 0 {
				id.AvatarURL = imgs[0].str("url")
			}
			return identity(id)
		},
	}
}
