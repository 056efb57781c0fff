package notify

// hostedProvider is the hosted push provider (OneSignal's REST API):
// it keeps the devices itself (its SDK registers them), so svcd sends to
// a user id (the provider's external user id), authenticated with
// "Authorization: Basic <REST_KEY>", the raw key. Enabling it requires the
// app id and the REST API key (SPEC.md: "enabling requires all three").
type hostedProvider struct{}

var _ provider = hostedProvider{}

func (hostedProvider) name() string { return HostedPush }

func (hostedProvider) members() []member {
	return []member{
		{key: "app_id"},
		{key: "api_key"},
		// endpoint is the REST API's base: POST <endpoint>/notifications
		// sends, GET <endpoint>/notifications?app_id=... probes.
		{key: "endpoint", def: "https://onesignal.com/api/v1", url: true},
	}
}

func (hostedProvider) check(cfg map[string]string) map[string]string {
	bad := map[string]string{}
	required(cfg, bad, "app_id", "api_key")
	return bad
}

func (hostedProvider) devices() bool { return false }
