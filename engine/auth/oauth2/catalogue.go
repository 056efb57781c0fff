package oauth2

// All returns the catalogue: the 15 named providers (CONTRACT.md) and the
// generic oidc, in the order their lists show them. Each call builds new
// values, so a caller may keep and change its own.
func All() []*Provider {
	return []*Provider{
		apple(), bitbucket(), discord(), facebook(), gitea(), github(), gitlab(), google(),
		linkedin(), microsoft(), notion(), slack(), spotify(), twitch(), twitter(), oidc(),
	}
}
