package api_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"svcd/api/apitest"
)

// providerRow is one named provider as the fake plays it: how its token
// endpoint takes the client's credentials, what its API answers (the
// provider's real JSON shapes, abridged), and the identity the node must
// read from it.
type providerRow struct {
	name string
	// style is how the token endpoint takes the client's credentials:
	// "header" (HTTP Basic only) or "params" (the form only).
	style string
	// userinfo is the path (and query) of the user-info URL under the
	// provider's part of the fake ("" for none).
	userinfo string
	// answers are the API's bodies by path.
	answers map[string]string
	// headers are what every API call must carry.
	headers map[string]string
	// tokenForm: the token endpoint answers form-encoded (GitHub).
	tokenForm bool
	// idToken are the claims of the ID token the token answer carries.
	idToken map[string]any
	// authParams must be in the authorization URL.
	authParams map[string]string
	// meta is the identity the answer must show; email the account's
	// email ("" for a synthetic one: the provider did not verify it).
	meta  map[string]any
	email string
}

func providerRows() []*providerRow {
	return []*providerRow{
		{name: "apple", style: "params",
			idToken: map[string]any{"sub": "001234.9f1e2d3c4b5a.0412", "email": "x7d2@privaterelay.appleid.com",
				"email_verified": "true", "is_private_email": "true", "auth_time": 1700000000},
			authParams: map[string]string{"response_mode": "form_post", "scope": "name email"},
			meta:       map[string]any{"id": "001234.9f1e2d3c4b5a.0412", "email": "x7d2@privaterelay.appleid.com", "verified": true},
			email:      "x7d2@privaterelay.appleid.com"},
		{name: "bitbucket", style: "header", userinfo: "/2.0/user",
			answers: map[string]string{
				"/2.0/user": `{"uuid":"{b2a6c3d4-1e2f-4a5b-8c9d-0e1f2a3b4c5d}","username":"annb","display_name":"Ann Bucket",
					"account_id":"557058:11111111-2222","type":"user","links":{"avatar":{"href":"https://bitbucket.org/account/annb/avatar/"},
					"html":{"href":"https://bitbucket.org/annb/"}},"created_on":"2020-01-01T00:00:00.000000+00:00"}`,
				"/2.0/user/emails": `{"pagelen":10,"page":1,"size":2,"values":[
					{"email":"old@example.com","is_primary":false,"is_confirmed":true,"type":"email"},
					{"email":"ann.bucket@example.com","is_primary":true,"is_confirmed":true,"type":"email"}]}`},
			authParams: map[string]string{"scope": "account email"},
			meta: map[string]any{"id": "{b2a6c3d4-1e2f-4a5b-8c9d-0e1f2a3b4c5d}", "email": "ann.bucket@example.com", "verified": true,
				"name": "Ann Bucket", "username": "annb", "avatar_url": "https://bitbucket.org/account/annb/avatar/"},
			email: "ann.bucket@example.com"},
		{name: "discord", style: "params", userinfo: "/api/users/@me",
			answers: map[string]string{"/api/users/@me": `{"id":"80351110224678912","username":"nelly","discriminator":"0",
				"global_name":"Nelly","avatar":"8342729096ea3675442027381ff50dfe","verified":true,"email":"nelly@discord.com",
				"flags":64,"banner":null,"accent_color":null,"premium_type":1,"public_flags":64,"mfa_enabled":true,"locale":"en-US"}`},
			meta: map[string]any{"id": "80351110224678912", "email": "nelly@discord.com", "verified": true, "name": "Nelly", "username": "nelly",
				"avatar_url": "https://cdn.discordapp.com/avatars/80351110224678912/8342729096ea3675442027381ff50dfe.png"},
			email: "nelly@discord.com"},
		{name: "facebook", style: "params", userinfo: "/me?fields=id,name,email,picture.type(large)",
			answers: map[string]string{"/me": `{"id":"10158000000000001","name":"Fay Book","email":"fay@example.com",
				"picture":{"data":{"height":200,"is_silhouette":false,"url":"https://platform-lookaside.fbsbx.com/platform/profilepic/?asid=1","width":200}}}`},
			meta: map[string]any{"id": "10158000000000001", "email": "fay@example.com", "verified": false, "name": "Fay Book",
				"avatar_url": "https://platform-lookaside.fbsbx.com/platform/profilepic/?asid=1"}},
		{name: "gitea", style: "params", userinfo: "/api/v1/user",
			answers: map[string]string{"/api/v1/user": `{"id":7,"login":"gitty","login_name":"","full_name":"Git Tea",
				"email":"gitty@example.com","avatar_url":"https://gitea.com/avatars/0f5e","language":"en-US","is_admin":false,
				"last_login":"2024-01-01T00:00:00Z","created":"2020-01-01T00:00:00Z","restricted":false,"active":true}`},
			meta: map[string]any{"id": "7", "email": "gitty@example.com", "verified": false, "name": "Git Tea", "username": "gitty",
				"avatar_url": "https://gitea.com/avatars/0f5e"}},
		{name: "github", style: "params", userinfo: "/user", tokenForm: true,
			answers: map[string]string{
				"/user": `{"login":"octocat","id":583231,"node_id":"MDQ6VXNlcjU4MzIzMQ==","avatar_url":"https://avatars.githubusercontent.com/u/583231?v=4",
					"type":"User","site_admin":false,"name":"The Octocat","company":"@github","blog":"https://github.blog","email":null,
					"public_repos":8,"created_at":"2011-01-25T18:44:36Z"}`,
				"/user/emails": `[{"email":"octo@example.com","primary":false,"verified":false,"visibility":null},
					{"email":"octocat@github.com","primary":true,"verified":true,"visibility":"private"}]`},
			headers:    map[string]string{"Accept": "application/vnd.github+json"},
			authParams: map[string]string{"scope": "read:user user:email"},
			meta: map[string]any{"id": "583231", "email": "octocat@github.com", "verified": true, "name": "The Octocat", "username": "octocat",
				"avatar_url": "https://avatars.githubusercontent.com/u/583231?v=4"},
			email: "octocat@github.com"},
		{name: "gitlab", style: "params", userinfo: "/api/v4/user",
			answers: map[string]string{"/api/v4/user": `{"id":1,"username":"john_smith","name":"John Smith","state":"active",
				"avatar_url":"https://gitlab.example.com/uploads/-/system/user/avatar/1/index.jpg","web_url":"https://gitlab.example.com/john_smith",
				"created_at":"2012-05-23T08:00:58Z","email":"john@example.com","confirmed_at":"2012-05-23T09:05:22Z","two_factor_enabled":true}`},
			meta: map[string]any{"id": "1", "email": "john@example.com", "verified": true, "name": "John Smith", "username": "john_smith",
				"avatar_url": "https://gitlab.example.com/uploads/-/system/user/avatar/1/index.jpg"},
			email: "john@example.com"},
		{name: "google", style: "params", userinfo: "/oauth2/v3/userinfo",
			answers: map[string]string{"/oauth2/v3/userinfo": `{"sub":"110169484474386276334","name":"Gwen Google","given_name":"Gwen",
				"family_name":"Google","picture":"https://lh3.googleusercontent.com/a/ACg8ocK","email":"gwen@gmail.com","email_verified":true,"locale":"en"}`},
			authParams: map[string]string{"scope": "openid email profile"},
			meta: map[string]any{"id": "110169484474386276334", "email": "gwen@gmail.com", "verified": true, "name": "Gwen Google",
				"avatar_url": "https://lh3.googleusercontent.com/a/ACg8ocK"},
			email: "gwen@gmail.com"},
		{name: "linkedin", style: "params", userinfo: "/v2/userinfo",
			answers: map[string]string{"/v2/userinfo": `{"sub":"782bbtaQ","email_verified":true,"name":"John Doe",
				"locale":{"country":"US","language":"en"},"given_name":"John","family_name":"Doe","email":"doe@email.com",
				"picture":"https://media.licdn.com/dms/image/C4E03AQ/profile-displayphoto"}`},
			meta: map[string]any{"id": "782bbtaQ", "email": "doe@email.com", "verified": true, "name": "John Doe",
				"avatar_url": "https://media.licdn.com/dms/image/C4E03AQ/profile-displayphoto"},
			email: "doe@email.com"},
		{name: "microsoft", style: "params", userinfo: "/v1.0/me",
			answers: map[string]string{"/v1.0/me": `{"@odata.context":"https://graph.microsoft.com/v1.0/$metadata#users/$entity",
				"businessPhones":["+1 412 555 0109"],"displayName":"Megan Bowen","givenName":"Megan","jobTitle":"Auditor",
				"mail":"MeganB@M365x214355.onmicrosoft.com","mobilePhone":null,"officeLocation":"12/1110","preferredLanguage":"en-US",
				"surname":"Bowen","userPrincipalName":"MeganB@M365x214355.onmicrosoft.com","id":"48d31887-5fad-4d73-a9f5-3c356e68a038"}`},
			meta: map[string]any{"id": "48d31887-5fad-4d73-a9f5-3c356e68a038", "email": "MeganB@M365x214355.onmicrosoft.com", "verified": false,
				"name": "Megan Bowen", "username": "MeganB@M365x214355.onmicrosoft.com"}},
		{name: "notion", style: "header", userinfo: "/v1/users/me",
			answers: map[string]string{"/v1/users/me": `{"object":"user","id":"16d84278-ab0e-484c-9bdd-b35da3bd8905","name":"pied piper",
				"avatar_url":null,"type":"bot","bot":{"owner":{"type":"user","user":{"object":"user","id":"5389a034-eb5c-47b5-8a9e-f79c99ef166c",
				"name":"christine makenotion","avatar_url":"https://s3-us-west-2.amazonaws.com/public.notion-static.com/avatar.png",
				"type":"person","person":{"email":"christine@makenotion.com"}}},"workspace_name":"Notion Team"},"request_id":"9f8e"}`},
			headers:    map[string]string{"Notion-Version": "2022-06-28"},
			authParams: map[string]string{"owner": "user"},
			meta: map[string]any{"id": "5389a034-eb5c-47b5-8a9e-f79c99ef166c", "email": "christine@makenotion.com", "verified": false,
				"name": "christine makenotion", "avatar_url": "https://s3-us-west-2.amazonaws.com/public.notion-static.com/avatar.png"}},
		{name: "slack", style: "params", userinfo: "/api/openid.connect.userInfo",
			answers: map[string]string{"/api/openid.connect.userInfo": `{"ok":true,"sub":"U0R7JM","https://slack.com/user_id":"U0R7JM",
				"https://slack.com/team_id":"T0R7GR","email":"krane@slack-corp.com","email_verified":true,"date_email_verified":1622128723,
				"name":"krane","picture":"https://secure.gravatar.com/avatar/krane-512.png","given_name":"Bront","family_name":"Labradoodle",
				"locale":"en-US","https://slack.com/team_name":"kraneflannel","https://slack.com/team_domain":"kraneflannel"}`},
			meta: map[string]any{"id": "U0R7JM", "email": "krane@slack-corp.com", "verified": true, "name": "krane",
				"avatar_url": "https://secure.gravatar.com/avatar/krane-512.png"},
			email: "krane@slack-corp.com"},
		{name: "spotify", style: "header", userinfo: "/v1/me",
			answers: map[string]string{"/v1/me": `{"country":"SE","display_name":"JM Wizzler","email":"email@example.com",
				"explicit_content":{"filter_enabled":false,"filter_locked":false},"external_urls":{"spotify":"https://open.spotify.com/user/wizzler"},
				"followers":{"href":null,"total":3829},"href":"https://api.spotify.com/v1/users/wizzler","id":"wizzler",
				"images":[{"height":300,"url":"https://i.scdn.co/image/ab6775700000ee85","width":300}],"product":"premium","type":"user",
				"uri":"spotify:user:wizzler"}`},
			meta: map[string]any{"id": "wizzler", "email": "email@example.com", "verified": false, "name": "JM Wizzler",
				"avatar_url": "https://i.scdn.co/image/ab6775700000ee85"}},
		{name: "twitch", style: "params", userinfo: "/helix/users",
			answers: map[string]string{"/helix/users": `{"data":[{"id":"141981764","login":"twitchdev","display_name":"TwitchDev","type":"",
				"broadcaster_type":"partner","description":"Supporting third-party developers building Twitch integrations",
				"profile_image_url":"https://static-cdn.jtvnw.net/jtv_user_pictures/8a6381c7-profile_image-300x300.png",
				"offline_image_url":"https://static-cdn.jtvnw.net/jtv_user_pictures/3f13ab61-channel_offline_image-1920x1080.png",
				"view_count":5980557,"email":"not-real@email.com","created_at":"2016-12-14T20:32:28Z"}]}`},
			headers: map[string]string{"Client-Id": "client-twitch"},
			meta: map[string]any{"id": "141981764", "email": "not-real@email.com", "verified": true, "name": "TwitchDev", "username": "twitchdev",
				"avatar_url": "https://static-cdn.jtvnw.net/jtv_user_pictures/8a6381c7-profile_image-300x300.png"},
			email: "not-real@email.com"},
		{name: "twitter", style: "header", userinfo: "/2/users/me?user.fields=id,name,username,profile_image_url",
			answers: map[string]string{"/2/users/me": `{"data":{"id":"2244994945","name":"X Dev","username":"XDevelopers",
				"profile_image_url":"https://pbs.twimg.com/profile_images/1445764922474827784/W2zEPN7U_normal.jpg"}}`},
			authParams: map[string]string{"code_challenge_method": "S256"},
			meta: map[string]any{"id": "2244994945", "verified": false, "name": "X Dev", "username": "XDevelopers",
				"avatar_url": "https://pbs.twimg.com/profile_images/1445764922474827784/W2zEPN7U_normal.jpg"}},
	}
}

// TestOAuth2NamedProviders runs the whole flow for each of the 15 named
// providers against a local server that answers like that provider:
// authorize (the provider's parameters), the code exchange (its way of
// authenticating the client, PKCE where forced, Apple's signed client
// secret and ID token), its user-info API, and the identity and account
// the node makes of it. The generic oidc is TestOAuth2ExchangeOIDC's.
func TestOAuth2NamedProviders(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, coll("people", "auth", []map[string]any{f("name", "text"), f("avatar", "url")}))
	fake := newFakeProviders(t)
	rows := providerRows()
	settings := map[string]any{"hooks.http.allow": "127.0.0.1"}
	for _, row := range rows {
		fake.rows[row.name] = row
		k := "oauth2." + row.name + "."
		settings[k+"enabled"] = "1"
		settings[k+"client_id"] = "client-" + row.name
		settings[k+"client_secret"] = "secret-" + row.name
		settings[k+"auth_url"] = fake.url(row.name, "/authorize")
		settings[k+"token_url"] = fake.url(row.name, "/token")
		if row.userinfo != "" {
			settings[k+"userinfo_url"] = fake.url(row.name, row.userinfo)
		}
	}
	settings["oauth2.apple.team_id"] = "TEAM123456"
	settings["oauth2.apple.key_id"] = "KEY1234567"
	settings["oauth2.apple.private_key"] = fake.applePEM()
	settings["oauth2.apple.jwks_url"] = fake.url("apple", "/keys")
	s.MustAdmin(t, http.StatusOK, "PATCH", settingsURL, settings)

	res, out := s.Do(t, "GET", "/api/v1/auth/people/oauth2/providers", nil, nil)
	if n := strings.Count(string(out), `"name":`); res.StatusCode != 200 || n != 15 {
		t.Fatalf("providers: %d, %d listed: %s", res.StatusCode, n, out)
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			u, state := oauthAuthorize(t, s, "people", row.name, "")
			checkAuthorizeURL(t, fake, row, u)
			code, _ := oauthVisit(t, u)
			d := oauthExchange(t, s, "people", map[string]any{"provider": row.name, "code": code, "state": state}, nil).ok()
			meta, rec := apitest.Obj(t, d["meta"]), apitest.Obj(t, d["record"])
			want := map[string]any{"provider": row.name, "is_new": true}
			for k, v := range row.meta {
				want[k] = v
			}
			for k, v := range want {
				if meta[k] != v {
					t.Errorf("meta.%s = %v, want %v (meta %v)", k, meta[k], v, meta)
				}
			}
			for _, k := range []string{"email", "name", "username", "avatar_url"} {
				if _, set := want[k]; !set && meta[k] != nil {
					t.Errorf("meta.%s = %v, want none", k, meta[k])
				}
			}
			switch email := rec["email"].(string); {
			case row.email != "" && (!strings.EqualFold(email, row.email) || rec["email_verified"] != true):
				t.Errorf("account email %s (verified %v), want %s verified", email, rec["email_verified"], row.email)
			case row.email == "" && (!strings.HasSuffix(email, "@oauth2.invalid") || rec["email_verified"] != false):
				t.Errorf("account email %s (verified %v), want a synthetic one", email, rec["email_verified"])
			}
			if n, _ := row.meta["name"].(string); rec["name"] != nilIfEmpty(n) {
				t.Errorf("account name %v, want %q", rec["name"], n)
			}
			if a, _ := row.meta["avatar_url"].(string); rec["avatar"] != nilIfEmpty(a) {
				t.Errorf("account avatar %v, want %q", rec["avatar"], a)
			}
			// Again: the same account.
			u, state = oauthAuthorize(t, s, "people", row.name, "")
			code, _ = oauthVisit(t, u)
			again := oauthExchange(t, s, "people", map[string]any{"provider": row.name, "code": code, "state": state}, nil).ok()
			if apitest.Obj(t, again["record"])["id"] != rec["id"] || apitest.Obj(t, again["meta"])["is_new"] != false {
				t.Errorf("the second sign-in: %v", again)
			}
		})
	}
	t.Run("apple: an ID token that does not verify", func(t *testing.T) {
		for _, tweak := range []string{"aud", "iss", "key"} {
			u, state := oauthAuthorize(t, s, "people", "apple", "")
			code, _ := oauthVisit(t, u)
			fake.mu.Lock()
			fake.tweak = tweak
			fake.mu.Unlock()
			st, out := oauthExchange(t, s, "people", map[string]any{"provider": "apple", "code": code, "state": state}, nil).pair()
			if st != 400 || out["error"] != "The OAuth2 provider's answer could not be verified" {
				t.Errorf("%s: %d %v", tweak, st, out)
			}
		}
	})
	t.Run("twitter without the node's state needs the client's verifier", func(t *testing.T) {
		st, out := oauthExchange(t, s, "people", map[string]any{"provider": "twitter", "code": "x"}, nil).pair()
		if st != 422 || apitest.Obj(t, out["details"])["code_verifier"] == nil {
			t.Errorf("%d %v", st, out)
		}
	})
	t.Run("a provider that takes the other client authentication refuses", func(t *testing.T) {
		fake.mu.Lock()
		fake.rows["gitlab"].style = "header"
		fake.mu.Unlock()
		u, state := oauthAuthorize(t, s, "people", "gitlab", "")
		code, _ := oauthVisit(t, u)
		st, out := oauthExchange(t, s, "people", map[string]any{"provider": "gitlab", "code": code, "state": state}, nil).pair()
		if st != 400 || apitest.Obj(t, out["details"])["provider_error"] != "invalid_client" {
			t.Errorf("%d %v", st, out)
		}
	})
}

// checkAuthorizeURL checks the authorization URL the node made for row.
func checkAuthorizeURL(t *testing.T, fake *fakeProviders, row *providerRow, raw string) {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil || !strings.HasPrefix(raw, fake.url(row.name, "/authorize")+"?") {
		t.Fatalf("authorize_url %s", raw)
	}
	q := u.Query()
	if q.Get("client_id") != "client-"+row.name || q.Get("redirect_uri") != oauthRedirect || q.Get("response_type") != "code" || q.Get("state") == "" {
		t.Errorf("authorize_url query %v", q)
	}
	for k, v := range row.authParams {
		if q.Get(k) != v {
			t.Errorf("authorize_url %s = %q, want %q", k, q.Get(k), v)
		}
	}
	if (row.idToken != nil) != q.Has("nonce") {
		t.Errorf("authorize_url nonce %q", q.Get("nonce"))
	}
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}
