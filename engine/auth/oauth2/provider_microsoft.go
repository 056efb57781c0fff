package oauth2

import "context"

// microsoft: Microsoft Graph's /me. The mail attribute is set by tenant
// admins and never verified by Microsoft (the "nOAuth" account takeover):
// unverified, so it never merges into an existing account.
func microsoft() *Provider {
	return &Provider{
		Name:        "microsoft",
		DisplayName: "Microsoft",
		AuthURL:     "https://login.microsoftonline.com/common/oauth2/v2.0/authorize",
		TokenURL:    "https://login.microsoftonline.com/common/oauth2/v2.0/token",
		UserInfoURL: "https://graph.microsoft.com/v1.0/me",
		Scopes:      []string{"User.Read"},
		AuthStyle:   AuthInParams,
		Identify: func(ctx context.Context, s *Source) (*Identity, error) {
			u, err := s.userInfo(ctx, nil)
			if err != nil {
				return nil, err
			}
			return identity(&Identity{ID: u.str("id"), Email: u.str("mail"), Name: u.str("displayName"),
				Username: u.str("userPrincipalName")})
		},
	}
}
