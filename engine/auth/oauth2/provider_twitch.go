package oauth2

import "context"

// twitch: Helix /users (it wants the client id in a Client-Id header). It
// answers only a verified email, and only with the user:read:email scope.
func twitch() *Provider {
	return &Provider{
		Name:        "twitch",
		DisplayName: "Twitch",
		AuthURL:     "https://id.twitch.tv/oauth2/authorize",
		TokenURL:    "https://id.twitch.tv/oauth2/token",
		UserInfoURL: "https://api.twitch.tv/helix/users",
		Scopes:      []string{"user:read:email"},
		AuthStyle:   AuthInParams,
		Identify: func(ctx context.Context, s *Source) (*Identity, error) {
			u, err := s.userInfo(ctx, map[string]string{"Client-Id": s.Config.ClientID})
			if err != nil {
				return nil, err
			}
			users := u.list("data")
			if len(users) == 0 {
				return nil, invalid("the Twitch answer holds no user")
			}
			d := users[0]
			email := d.str("email")
			return identity(&Identity{ID: d.str("id"), Email: email, Verified: email != "", Name: d.str("display_name"),
				Username: d.str("login"), AvatarURL: d.str("profile_image_url")})
		},
	}
}
