package oauth2

import "context"

// twitter: X's OAuth 2.0, which requires PKCE; /2/users/me. It answers no
// email unless the app has the users.email scope and the user-info URL
// asks for confirmed_email; that one is confirmed by X.
func twitter() *Provider {
	return &Provider{
		Name:        "twitter",
		DisplayName: "X (Twitter)",
		AuthURL:     "https://twitter.com/i/oauth2/authorize",
		TokenURL:    "https://api.twitter.com/2/oauth2/token",
		UserInfoURL: "https://api.twitter.com/2/users/me?user.fields=id,name,username,profile_image_url",
		Scopes:      []string{"users.read", "tweet.read"},
		PKCE:        true,
		AuthStyle:   AuthInHeader,
		Identify: func(ctx context.Context, s *Source) (*Identity, error) {
			u, err := s.userInfo(ctx, nil)
			if err != nil {
				return nil, err
			}
			d := u.obj("data")
			if d == nil {
				return nil, invalid("the X answer holds no user")
			}
			email := d.str("confirmed_email")
			return identity(&Identity{ID: d.str("id"), Email: email, Verified: email != "", Name: d.str("name"),
				Username: d.str("username"), AvatarURL: d.str("profile_image_url")})
		},
	}
}
