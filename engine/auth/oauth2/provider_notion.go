package oauth2

import "context"

// notion: /v1/users/me answers the integration's bot; the person who
// authorized it is the bot's owner. The token endpoint takes only HTTP
// Basic credentials, and every API call needs a Notion-Version. Notion
// does not say whether the email was confirmed: unverified.
func notion() *Provider {
	return &Provider{
		Name:        "notion",
		DisplayName: "Notion",
		AuthURL:     "https://api.notion.com/v1/oauth/authorize",
		TokenURL:    "https://api.notion.com/v1/oauth/token",
		UserInfoURL: "https://api.notion.com/v1/users/me",
		AuthStyle:   AuthInHeader,
		AuthParams:  map[string]string{"owner": "user"},
		Identify: func(ctx context.Context, s *Source) (*Identity, error) {
			u, err := s.userInfo(ctx, map[string]string{"Notion-Version": "2022-06-28"})
			if err != nil {
				return nil, err
			}
			owner := u.obj("bot", "owner", "user")
			if owner == nil {
				return nil, invalid("the Notion answer names no owner")
			}
			return identity(&Identity{ID: owner.str("id"), Email: owner.str("person", "email"),
				Name: owner.str("name"), AvatarURL: owner.str("avatar_url")})
		},
	}
}
