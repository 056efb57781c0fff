package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"svcd/api/apitest"
	"svcd/engine/notify"
	"svcd/internal/push/pushtest"
)

// A fresh node has no provider and no notification collections: the
// device routes answer 503, and enabling a provider needs the users'
// auth collection and valid settings.
func TestNotificationsBeforeBootstrap(t *testing.T) {
	s := apitest.Start(t, apitest.Options{})
	ov := apitest.Obj(t, s.MustAdmin(t, http.StatusOK, http.MethodGet, providersURL, nil)["data"])
	if ov["bootstrapped"] != false || len(apitest.List(t, ov["providers"])) != 3 {
		t.Fatalf("overview: %v", ov)
	}
	fcm := pushtestFCMAccount(t)
	apitest.Run(t, s, []apitest.Scenario{
		{Name: "anonymous device", Method: http.MethodPost, URL: devicesURL, Body: map[string]any{"token": "t", "provider": "fcm", "platform": "ios"},
			ExpectedStatus: http.StatusUnauthorized},
		{Name: "no users collection", Method: http.MethodPatch, URL: providersURL + "/fcm", Admin: true,
			Body: map[string]any{"enabled": true, "service_account": fcm}, ExpectedStatus: http.StatusUnprocessableEntity,
			AfterFunc: apitest.Details("notifications.users_collection")},
	})
	s.CreateCollection(t, usersCollection())
	_, tok := credUser(t, s, "early@example.com")
	apitest.Run(t, s, []apitest.Scenario{
		{Name: "register before bootstrap", Method: http.MethodPost, URL: devicesURL, Headers: bearer(tok),
			Body: map[string]any{"token": "t1", "provider": "fcm", "platform": "ios"}, ExpectedStatus: http.StatusServiceUnavailable,
			ExpectedContent: []string{"enable a push provider"}},
		{Name: "invalid body before bootstrap is still 503", Method: http.MethodPost, URL: devicesURL, Headers: bearer(tok),
			Body: map[string]any{"provider": "hostedpush"}, ExpectedStatus: http.StatusServiceUnavailable},
		{Name: "unregister before bootstrap", Method: http.MethodDelete, URL: devicesURL + "/t1", Headers: bearer(tok),
			ExpectedStatus: http.StatusServiceUnavailable},
		{Name: "collections absent", Method: http.MethodGet, URL: "/api/v1/admin/collections/" + notify.DevicesCollection, Admin: true,
			ExpectedStatus: http.StatusNotFound},
		{Name: "an admin cannot name a collection svc_", Method: http.MethodPost, URL: "/api/v1/admin/collections", Admin: true,
			Body: map[string]any{"name": notify.InboxCollection, "type": "base"}, ExpectedStatus: http.StatusUnprocessableEntity,
			AfterFunc: apitest.Details("name")},
		{Name: "a disabled provider needs nothing", Method: http.MethodPatch, URL: providersURL + "/hostedpush", Admin: true,
			Body: map[string]any{"app_id": "a1"}, ExpectedStatus: http.StatusOK, ExpectedContent: []string{`"enabled":false`, `"app_id":"a1"`}},
	})
	if s.MustAdmin(t, http.StatusOK, http.MethodGet, providersURL, nil)["data"].(map[string]any)["bootstrapped"] != false {
		t.Fatal("saving a disabled provider bootstrapped notifications")
	}
}

// pushtestFCMAccount is a valid service account (its token endpoint is
// a local stand-in).
func pushtestFCMAccount(t *testing.T) string {
	t.Helper()
	return pushtest.NewFCM(t).ServiceAccount
}

// Provider settings: every rule of SPEC.md and what enabling does.
func TestNotificationProviderSettings(t *testing.T) {
	e := newPushEnv(t)
	s := e.s
	var sa map[string]any
	if err := json.Unmarshal([]byte(e.fcm.ServiceAccount), &sa); err != nil {
		t.Fatal(err)
	}
	without := func(k string) string {
		m := map[string]any{}
		for kk, v := range sa {
			if kk != k {
				m[kk] = v
			}
		}
		b, _ := json.Marshal(m)
		return string(b)
	}
	with := func(k string, v any) string {
		m := map[string]any{}
		for kk, vv := range sa {
			m[kk] = vv
		}
		m[k] = v
		b, _ := json.Marshal(m)
		return string(b)
	}
	unprocessable := func(name, provider string, body map[string]any, detail, fragment string) apitest.Scenario {
		return apitest.Scenario{Name: name, Method: http.MethodPatch, URL: providersURL + "/" + provider, Admin: true, Body: body,
			ExpectedStatus: http.StatusUnprocessableEntity, ExpectedContent: []string{fragment}, AfterFunc: apitest.Details(detail)}
	}
	apitest.Run(t, s, []apitest.Scenario{
		{Name: "unknown provider", Method: http.MethodPatch, URL: providersURL + "/gcm", Admin: true, Body: map[string]any{"enabled": true},
			ExpectedStatus: http.StatusNotFound},
		{Name: "unknown provider probe", Method: http.MethodPost, URL: providersURL + "/gcm/test-connection", Admin: true,
			ExpectedStatus: http.StatusNotFound},
		{Name: "not an object", Method: http.MethodPatch, URL: providersURL + "/fcm", Admin: true, Body: "[1]", ExpectedStatus: http.StatusBadRequest},
		unprocessable("unknown member", "fcm", map[string]any{"api_key": "x"}, "api_key", "unknown setting of fcm"),
		unprocessable("enabled not a boolean", "fcm", map[string]any{"enabled": "yes"}, "enabled", "true or false"),
		unprocessable("endpoint not a URL", "fcm", map[string]any{"endpoint": "ftp://x"}, "endpoint", "http or https URL"),
		unprocessable("fcm without a service account", "fcm", map[string]any{"enabled": true}, "service_account", "is required"),
		unprocessable("fcm service account not JSON", "fcm", map[string]any{"enabled": true, "service_account": "{not json"},
			"service_account", "must be valid JSON"),
		unprocessable("fcm service account of another type", "fcm", map[string]any{"enabled": "1", "service_account": with("type", "authorized_user")},
			"service_account", `\"type\": \"service_account\"`),
		unprocessable("fcm service account without its key", "fcm", map[string]any{"enabled": true, "service_account": without("private_key")},
			"service_account", "must have private_key"),
		unprocessable("fcm service account without email", "fcm", map[string]any{"enabled": true, "service_account": without("client_email")},
			"service_account", "client_email"),
		unprocessable("fcm service account with a bad key", "fcm", map[string]any{"enabled": true, "service_account": with("private_key", "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")},
			"service_account", "private_key must be"),
		unprocessable("fcm without a project", "fcm", map[string]any{"enabled": true, "service_account": without("project_id")},
			"project_id", "is required"),
		unprocessable("hostedpush needs its app id and key", "hostedpush", map[string]any{"enabled": true}, "api_key", "is required"),
		unprocessable("apns needs its key", "apns", map[string]any{"enabled": true, "team_id": "T", "key_id": "K", "topic": "x"},
			"private_key", "is required"),
		unprocessable("apns key not a p8", "apns", map[string]any{"enabled": true, "team_id": "T", "key_id": "K", "topic": "x",
			"private_key": sa["private_key"]}, "private_key", "ECDSA"),
	})
	ov := apitest.Obj(t, s.MustAdmin(t, http.StatusOK, http.MethodGet, providersURL, nil)["data"])
	if ov["bootstrapped"] != false {
		t.Fatalf("a refused enable bootstrapped: %v", ov)
	}
	// A service account given as the key file's object, with the project
	// falling back to the account's own.
	st := apitest.Obj(t, s.MustAdmin(t, http.StatusOK, http.MethodPatch, providersURL+"/fcm",
		map[string]any{"enabled": true, "service_account": sa, "endpoint": e.fcm.URL()})["data"])
	settings := apitest.Obj(t, st["settings"])
	if st["enabled"] != true || st["configured"] != true || settings["service_account"] != "********" || settings["project_id"] != "" {
		t.Fatalf("enabled fcm: %v", st)
	}
	// Enabling created both collections through the log.
	for _, c := range []string{notify.InboxCollection, notify.DevicesCollection} {
		col := apitest.Obj(t, s.MustAdmin(t, http.StatusOK, http.MethodGet, "/api/v1/admin/collections/"+c, nil)["data"])
		var names []string
		for _, fl := range apitest.List(t, col["fields"]) {
			names = append(names, apitest.Obj(t, fl)["name"].(string))
		}
		want := map[string]string{notify.InboxCollection: "user,type,title,body,data,read_at",
			notify.DevicesCollection: "user,provider,token,platform,app_version,enabled,last_seen"}[c]
		if strings.Join(names, ",") != want || col["create_rule"] != nil || col["view_rule"] != "user = @request.auth.id" {
			t.Fatalf("%s: %v", c, col)
		}
	}
	// Secrets are masked in the overview and in the settings, shown to
	// the owner with reveal=1; sending the mask back keeps the value.
	ov = apitest.Obj(t, s.MustAdmin(t, http.StatusOK, http.MethodGet, providersURL, nil)["data"])
	if ov["bootstrapped"] != true {
		t.Fatalf("overview after enabling: %v", ov)
	}
	revealed := s.MustAdmin(t, http.StatusOK, http.MethodGet, providersURL+"?reveal=1", nil)
	if !strings.Contains(jsonText(t, revealed), "BEGIN PRIVATE KEY") {
		t.Fatal("reveal=1 did not show the service account")
	}
	all := apitest.Obj(t, s.MustAdmin(t, http.StatusOK, http.MethodGet, "/api/v1/admin/settings", nil)["data"])
	if all["notifications.providers.fcm.service_account"] != "********" || all["notifications.providers.fcm.enabled"] != "1" {
		t.Fatalf("settings: fcm %v %v", all["notifications.providers.fcm.service_account"], all["notifications.providers.fcm.enabled"])
	}
	s.MustAdmin(t, http.StatusOK, http.MethodPatch, providersURL+"/fcm", map[string]any{"service_account": "********", "project_id": "other"})
	st = apitest.Obj(t, s.MustAdmin(t, http.StatusOK, http.MethodGet, providersURL+"?reveal=1", nil)["data"])
	fcmSt := apitest.Obj(t, apitest.List(t, st["providers"])[0])
	fs := apitest.Obj(t, fcmSt["settings"])
	if fcmSt["name"] != "fcm" || !strings.Contains(fs["service_account"].(string), e.fcm.ClientEmail) || fs["project_id"] != "other" {
		t.Fatalf("the masked secret sent back changed it: %v", fcmSt)
	}
	// An enabled provider keeps being checked: breaking its account is
	// refused; null goes back to the default.
	apitest.Run(t, s, []apitest.Scenario{
		unprocessable("breaking an enabled provider", "fcm", map[string]any{"service_account": "{}"}, "service_account", "must"),
		{Name: "project back to default", Method: http.MethodPatch, URL: providersURL + "/fcm", Admin: true, Body: map[string]any{"project_id": nil},
			ExpectedStatus: http.StatusOK, ExpectedContent: []string{`"project_id":""`}, ExpectedHeaders: map[string]string{"X-Svc-Index": "*"}},
		{Name: "disable", Method: http.MethodPatch, URL: providersURL + "/fcm", Admin: true, Body: map[string]any{"enabled": false},
			ExpectedStatus: http.StatusOK, ExpectedContent: []string{`"enabled":false`, `"configured":true`}},
		{Name: "no worker for a push queue", Method: http.MethodPost, URL: "/api/v1/admin/workers", Admin: true,
			Body: map[string]any{"queue": "notifications.fcm", "code": "return 1"}, ExpectedStatus: http.StatusUnprocessableEntity,
			ExpectedContent: []string{"built-in queue"}},
	})
	// The changes are audited with their own actions.
	audit := jsonText(t, s.MustAdmin(t, http.StatusOK, http.MethodGet, "/api/v1/admin/audit-log?actionPrefix=notifications.", nil))
	if !strings.Contains(audit, `"action":"notifications.providers.update"`) || !strings.Contains(audit, `"target":"fcm"`) {
		t.Fatalf("audit: %s", audit)
	}
}

// Roles: developers read the providers masked; changing, probing,
// testing and revealing is the owner's.
func TestNotificationProviderRoles(t *testing.T) {
	e := newPushEnv(t)
	_, dev := newAdmin(t, e.s, "dev@example.com", "developer")
	_, editor := newAdmin(t, e.s, "ed@example.com", "editor")
	apitest.Run(t, e.s, []apitest.Scenario{
		{Name: "developer reads", URL: providersURL, Headers: bearer(dev), ExpectedStatus: http.StatusOK},
		{Name: "developer cannot reveal", URL: providersURL + "?reveal=1", Headers: bearer(dev), ExpectedStatus: http.StatusForbidden},
		{Name: "developer cannot change", Method: http.MethodPatch, URL: providersURL + "/fcm", Headers: bearer(dev),
			Body: map[string]any{"project_id": "p"}, ExpectedStatus: http.StatusForbidden},
		{Name: "developer cannot probe", Method: http.MethodPost, URL: providersURL + "/fcm/test-connection", Headers: bearer(dev),
			ExpectedStatus: http.StatusForbidden},
		{Name: "developer cannot send tests", Method: http.MethodPost, URL: "/api/v1/admin/notifications/test", Headers: bearer(dev),
			Body: map[string]any{"userId": "x"}, ExpectedStatus: http.StatusForbidden},
		{Name: "editor cannot read", URL: providersURL, Headers: bearer(editor), ExpectedStatus: http.StatusForbidden},
		{Name: "a user cannot read", URL: providersURL, Headers: bearer(userToken(t, e)), ExpectedStatus: http.StatusForbidden},
	})
}

func userToken(t *testing.T, e *pushEnv) string {
	t.Helper()
	_, tok := e.user(t, "someone@example.com")
	return tok
}

// jsonText is a decoded answer as JSON text.
func jsonText(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
