package oauth2

import "context"

// slack: Sign in with Slack (OpenID Connect); its user-info answer adds
// "ok", false on an error.
func slack() *Provider {
	return &Provider{
		Name:        "slack",
		DisplayName: "Slack",
		AuthURL:     "https://slack.com/openid/connect/authorize",
		TokenURL:    "https://slack.com/api/openid.connect.token",
		UserInfoURL: "https://slack.com/api/openid.connect.userInfo",
		Scopes:      []string{"openid", "profile", "email"},
		AuthStyle:   AuthInParams,
		Identify: func(ctx context.Context, s *Source) (*Identity, error) {
			u, err := s.userInfo(ctx, nil)
			if err != nil {
				return nil, err
			}
			if ok, present := u.get("ok").(bool); present && !ok {
				return nil, invalid("Slack answered an error: %s", u.str("error"))
			}
			return identity(standardClaims(u))
		},
	}
}
