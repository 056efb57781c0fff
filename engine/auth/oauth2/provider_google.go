package oauth2

import "context"

// google: the OpenID user-info endpoint (sub, email, email_verified,
// name, picture).
func google() *Provider {
	return &Provider{
		Name:        "google",
		DisplayName: "Google",
		AuthURL:     "https://accounts.google.com/o/oauth2/v2/auth",
		TokenURL:    "https://oauth2.googleapis.com/token",
		UserInfoURL: "https://www.googleapis.com/oauth2/v3/userinfo",
		Scopes:      []string{"openid", "email", "profile"},
		AuthStyle:   AuthInParams,
		Identify:    standardUserInfo,
	}
}

// standardUserInfo reads an OpenID Connect user-info answer (Google,
// LinkedIn, Slack).
func standardUserInfo(ctx context.Context, s *Source) (*Identity, error) {
	u, err := s.userInfo(ctx, nil)
	if err != nil {
		return nil, err
	}
	return identity(standardClaims(u))
}

// standardClaims maps the OpenID Connect standard claims.
func standardClaims(u object) *Identity {
	return &Identity{ID: u.str("sub"), Email: u.str("email"), Verified: u.flag("email_verified"),
		Name: u.str("name"), Username: u.str("preferred_username"), AvatarURL: u.str("picture")}
}
