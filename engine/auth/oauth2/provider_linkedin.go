package oauth2

// linkedin: Sign In with LinkedIn using OpenID Connect; its user-info
// endpoint answers the standard claims.
func linkedin() *Provider {
	return &Provider{
		Name:        "linkedin",
		DisplayName: "LinkedIn",
		AuthURL:     "https://www.linkedin.com/oauth/v2/authorization",
		TokenURL:    "https://www.linkedin.com/oauth/v2/accessToken",
		UserInfoURL: "https://api.linkedin.com/v2/userinfo",
		Scopes:      []string{"openid", "profile", "email"},
		AuthStyle:   AuthInParams,
		Identify:    standardUserInfo,
	}
}
