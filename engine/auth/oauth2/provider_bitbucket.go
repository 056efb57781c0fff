package oauth2

import "context"

// bitbucket: the account from /2.0/user, the email from /2.0/user/emails
// (the primary one, verified when Bitbucket says it is confirmed).
func bitbucket() *Provider {
	return &Provider{
		Name:        "bitbucket",
		DisplayName: "Bitbucket",
		AuthURL:     "https://bitbucket.org/site/oauth2/authorize",
		TokenURL:    "https://bitbucket.org/site/oauth2/access_token",
		UserInfoURL: "https://api.bitbucket.org/2.0/user",
		Scopes:      []string{"account", "email"},
		AuthStyle:   AuthInHeader,
		Identify: func(ctx context.Context, s *Source) (*Identity, error) {
			u, err := s.userInfo(ctx, nil)
			if err != nil {
				return nil, err
			}
			id := &Identity{ID: u.str("uuid"), Name: u.str("display_name"), Username: u.str("username"),
				AvatarURL: u.str("links", "avatar", "href")}
			emails, err := s.fetch(ctx, withSubpath(s.Config.UserInfoURL, "emails"), "emails", nil)
			if err != nil {
				return nil, err
			}
			for _, e := range emails.list("values") {
				if e.flag("is_primary") {
					id.Email, id.Verified = e.str("email"), e.flag("is_confirmed")
				}
			}
			return identity(id)
		},
	}
}
