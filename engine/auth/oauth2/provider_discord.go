package oauth2

import "context"

// discord: /users/@me; the avatar is a hash on Discord's CDN.
func discord() *Provider {
	return &Provider{
		Name:        "discord",
		DisplayName: "Discord",
		AuthURL:     "https://discord.com/oauth2/authorize",
		TokenURL:    "https://discord.com/api/oauth2/token",
		UserInfoURL: "https://discord.com/api/users/@me",
		Scopes:      []string{"identify", "email"},
		AuthStyle:   AuthInParams,
		Identify: func(ctx context.Context, s *Source) (*Identity, error) {
			u, err := s.userInfo(ctx, nil)
			if err != nil {
				return nil, err
			}
			id := &Identity{ID: u.str("id"), Email: u.str("email"), Verified: u.flag("verified"),
				Name: u.str("global_name"), Username: u.str("username")}
			if id.Name == "" {
				id.Name = id.Username
			}
			if h := u.str("avatar"); h != "" && id.ID != "" {
				id.AvatarURL = "https://cdn.discordapp.com/avatars/" + id.ID + "/" + h + ".png"
			}
			return identity(id)
		},
	}
}
