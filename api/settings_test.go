package api_test

import (
	"net/http"
	"testing"

	"svcd/api/apitest"
)

func TestSettings(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.AdminToken(t)

	apitest.Run(t, s, []apitest.Scenario{
		{
			Name:            "anonymous GET is 401",
			URL:             settingsURL,
			ExpectedStatus:  http.StatusUnauthorized,
			ExpectedContent: []string{"Authentication required"},
		},
		{
			Name:           "anonymous PATCH is 401",
			Method:         http.MethodPatch,
			URL:            settingsURL,
			Body:           map[string]any{"app.url": "https://evil.example"},
			ExpectedStatus: http.StatusUnauthorized,
		},
		{
			Name:           "a garbage token is 401",
			URL:            settingsURL,
			Headers:        map[string]string{"Authorization": "Bearer x"},
			ExpectedStatus: http.StatusUnauthorized,
		},
		{
			Name:           "GET has the documented defaults",
			URL:            settingsURL,
			Admin:          true,
			ExpectedStatus: http.StatusOK,
			ExpectedContent: []string{
				`"password.min_length":"12"`, `"realtime.retention_sec":"30"`, `"cors.max_age":"600"`,
				`"smtp.port":"587"`, `"s3.region":"auto"`, `"vector.max_candidates":"100000"`,
				`"auth.anonymous.enabled":"0"`, `"auth.mfa.enabled":"1"`, `"app.url":""`,
			},
		},
		{
			Name:            "PATCH sets strings, numbers and booleans as strings",
			Method:          http.MethodPatch,
			URL:             settingsURL,
			Admin:           true,
			Body:            map[string]any{"app.url": "http://localhost:8090", "realtime.retention_sec": 45, "smtp.enabled": true, "cors.credentials": false, "custom.key": "v"},
			ExpectedStatus:  http.StatusOK,
			ExpectedHeaders: map[string]string{"X-Svc-Index": "*"},
			ExpectedContent: []string{`"app.url":"http://localhost:8090"`, `"realtime.retention_sec":"45"`, `"smtp.enabled":"1"`, `"cors.credentials":"0"`, `"custom.key":"v"`},
		},
		{
			Name:            "GET shows the stored values",
			URL:             settingsURL,
			Admin:           true,
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"realtime.retention_sec":"45"`, `"smtp.enabled":"1"`, `"custom.key":"v"`},
		},
		{
			Name:               "null restores the default",
			Method:             http.MethodPatch,
			URL:                settingsURL,
			Admin:              true,
			Body:               map[string]any{"realtime.retention_sec": nil, "custom.key": nil},
			ExpectedStatus:     http.StatusOK,
			ExpectedContent:    []string{`"realtime.retention_sec":"30"`},
			NotExpectedContent: []string{`"custom.key"`},
		},
		{
			Name:               "a secret-looking key is masked",
			Method:             http.MethodPatch,
			URL:                settingsURL,
			Admin:              true,
			Body:               map[string]any{"smtp.pass": "hunter2", "oauth2.github.client_secret": "gh-secret", "s3.secret_access_key": "s3-secret", "mail.http.api_key": "k"},
			ExpectedStatus:     http.StatusOK,
			ExpectedContent:    []string{`"smtp.pass":"********"`, `"oauth2.github.client_secret":"********"`, `"s3.secret_access_key":"********"`, `"mail.http.api_key":"********"`},
			NotExpectedContent: []string{"hunter2", "gh-secret", "s3-secret"},
		},
		{
			Name:               "GET masks it too",
			URL:                settingsURL,
			Admin:              true,
			ExpectedStatus:     http.StatusOK,
			ExpectedContent:    []string{`"smtp.pass":"********"`},
			NotExpectedContent: []string{"hunter2"},
		},
		{
			Name:            "?reveal=1 shows it",
			URL:             settingsURL + "?reveal=1",
			Admin:           true,
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"smtp.pass":"hunter2"`, `"oauth2.github.client_secret":"gh-secret"`},
		},
		{
			Name:               "?reveal=0 does not",
			URL:                settingsURL + "?reveal=0",
			Admin:              true,
			ExpectedStatus:     http.StatusOK,
			NotExpectedContent: []string{"hunter2"},
		},
		{
			Name:           "sending the mask back leaves the secret unchanged",
			Method:         http.MethodPatch,
			URL:            settingsURL,
			Admin:          true,
			Body:           map[string]any{"smtp.pass": "********", "smtp.host": "mail.example.com"},
			ExpectedStatus: http.StatusOK,
			AfterFunc: func(t testing.TB, s *apitest.Server, _ []byte) {
				apitest.Scenario{
					URL:             settingsURL + "?reveal=1",
					Admin:           true,
					ExpectedStatus:  http.StatusOK,
					ExpectedContent: []string{`"smtp.pass":"hunter2"`, `"smtp.host":"mail.example.com"`},
				}.Test(t, s)
			},
		},
		{
			Name:            "an empty secret is not masked",
			Method:          http.MethodPatch,
			URL:             settingsURL,
			Admin:           true,
			Body:            map[string]any{"metrics.token": ""},
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"metrics.token":""`},
		},
		{
			Name:           "a numeric setting with a non-number is 422 on that key",
			Method:         http.MethodPatch,
			URL:            settingsURL,
			Admin:          true,
			Body:           map[string]any{"password.min_length": "twelve", "cors.max_age": "10m"},
			ExpectedStatus: http.StatusUnprocessableEntity,
			AfterFunc:      apitest.Details("password.min_length", "cors.max_age"),
		},
		{
			Name:            "a 0/1 setting accepts true and false",
			Method:          http.MethodPatch,
			URL:             settingsURL,
			Admin:           true,
			Body:            map[string]any{"docs.enabled": "false"},
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"docs.enabled":"false"`},
		},
		{
			Name:           "a 0/1 setting refuses other words",
			Method:         http.MethodPatch,
			URL:            settingsURL,
			Admin:          true,
			Body:           map[string]any{"docs.enabled": "maybe"},
			ExpectedStatus: http.StatusUnprocessableEntity,
			AfterFunc:      apitest.Details("docs.enabled"),
		},
		{
			Name:           "objects and arrays are 422",
			Method:         http.MethodPatch,
			URL:            settingsURL,
			Admin:          true,
			Body:           map[string]any{"a.b": map[string]any{}, "c.d": []int{1}},
			ExpectedStatus: http.StatusUnprocessableEntity,
			AfterFunc:      apitest.Details("a.b", "c.d"),
		},
		{
			Name:           "an invalid key is 422",
			Method:         http.MethodPatch,
			URL:            settingsURL,
			Admin:          true,
			Body:           map[string]any{"has space": "x", "": "y"},
			ExpectedStatus: http.StatusUnprocessableEntity,
			AfterFunc:      apitest.Details("has space", ""),
		},
		{
			Name:               "a refused patch stores nothing",
			URL:                settingsURL,
			Admin:              true,
			ExpectedStatus:     http.StatusOK,
			ExpectedContent:    []string{`"password.min_length":"12"`, `"cors.max_age":"600"`},
			NotExpectedContent: []string{`"a.b"`, `"has space"`},
		},
		{
			Name:           "malformed JSON is 400",
			Method:         http.MethodPatch,
			URL:            settingsURL,
			Admin:          true,
			Body:           `{"a":`,
			ExpectedStatus: http.StatusBadRequest,
		},
		{
			Name:      "a body that is not an object is refused (400, or 422 since 2566e63)",
			Method:    http.MethodPatch,
			URL:       settingsURL,
			Admin:     true,
			Body:      `["a"]`,
			AfterFunc: apitest.StatusIn(http.StatusBadRequest, http.StatusUnprocessableEntity),
		},
		{
			Name:           "null body is 400",
			Method:         http.MethodPatch,
			URL:            settingsURL,
			Admin:          true,
			Body:           `null`,
			ExpectedStatus: http.StatusBadRequest,
		},
	})
}

// TestSettingsSecureCookie: an https app.url makes the auth cookie Secure.
func TestSettingsSecureCookie(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.MustAdmin(t, http.StatusOK, http.MethodPatch, settingsURL, map[string]any{"app.url": "https://app.example.com"})
	res, body := s.Do(t, http.MethodPost, "/api/v1/admin/auth/login",
		map[string]string{"email": apitest.AdminEmail, "password": apitest.AdminPassword}, nil)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("login: %d %s", res.StatusCode, body)
	}
	for _, c := range res.Cookies() {
		if c.Name == "svc_admin_token" && !c.Secure {
			t.Errorf("cookie not Secure with an https app.url: %v", res.Header.Values("Set-Cookie"))
		}
	}
}

// TestSettingsAdminWindow: auth.admin.window_seconds sets the lifetime of
// new admin tokens and the cookie's Max-Age.
func TestSettingsAdminWindow(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.MustAdmin(t, http.StatusOK, http.MethodPatch, settingsURL, map[string]any{"auth.admin.window_seconds": 3600})
	res, body := s.Do(t, http.MethodPost, "/api/v1/admin/auth/login",
		map[string]string{"email": apitest.AdminEmail, "password": apitest.AdminPassword}, nil)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("login: %d %s", res.StatusCode, body)
	}
	found := false
	for _, c := range res.Cookies() {
		if c.Name == "svc_admin_token" {
			found = true
			if c.MaxAge != 3600 {
				t.Errorf("Max-Age = %d, want 3600", c.MaxAge)
			}
		}
	}
	if !found {
		t.Error("no cookie")
	}
}
