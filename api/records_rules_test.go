package api_test

import (
	"fmt"
	"net/http"
	"testing"

	"svcd/api/apitest"
)

// ruleCase runs the five record operations of one caller against one
// collection and expects the given statuses.
type ruleCase struct {
	coll                              string
	list, get, create, update, delete int
	admin                             bool
}

func (rc ruleCase) scenarios(s *apitest.Server, t testing.TB) []apitest.Scenario {
	who := "anonymous"
	if rc.admin {
		who = "admin"
	}
	// Each write works on its own record so that a delete cannot hide an
	// update's answer.
	mk := func() string { return s.CreateRecord(t, rc.coll, map[string]any{"title": "r"})["id"].(string) }
	getID, updID, delID := mk(), mk(), mk()
	base := "/api/v1/" + rc.coll
	all := []apitest.Scenario{
		{Name: fmt.Sprintf("%s: %s list", rc.coll, who), URL: base, Admin: rc.admin, ExpectedStatus: rc.list},
		{Name: fmt.Sprintf("%s: %s get", rc.coll, who), URL: base + "/" + getID, Admin: rc.admin, ExpectedStatus: rc.get},
		{Name: fmt.Sprintf("%s: %s create", rc.coll, who), Method: http.MethodPost, URL: base, Admin: rc.admin, Body: map[string]any{"title": "new"}, ExpectedStatus: rc.create},
		{Name: fmt.Sprintf("%s: %s update", rc.coll, who), Method: http.MethodPatch, URL: base + "/" + updID, Admin: rc.admin, Body: map[string]any{"title": "changed"}, ExpectedStatus: rc.update},
		{Name: fmt.Sprintf("%s: %s delete", rc.coll, who), Method: http.MethodDelete, URL: base + "/" + delID, Admin: rc.admin, ExpectedStatus: rc.delete},
	}
	var out []apitest.Scenario
	for _, sc := range all {
		if sc.ExpectedStatus != 0 { // 0: checked elsewhere
			out = append(out, sc)
		}
	}
	return out
}

func TestRecordRules(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	title := []map[string]any{f("title", "text")}
	// An expression no record of this test satisfies: every record is
	// titled "r", "new" or "changed". rules_test.go covers expressions
	// that admit some rows and refuse others.
	expr := "title = 'visible'"
	s.CreateCollection(t, coll("locked", "base", title)) // every rule null
	s.CreateCollection(t, coll("readable", "base", title, "view_rule", ""))
	s.CreateCollection(t, public(coll("open", "base", title)))
	s.CreateCollection(t, coll("exprview", "base", title, "view_rule", expr, "create_rule", expr, "update_rule", expr, "delete_rule", expr))
	s.CreateCollection(t, coll("exprwrite", "base", title, "view_rule", "", "create_rule", expr, "update_rule", expr, "delete_rule", expr))
	s.CreateCollection(t, coll("creatable", "base", title, "create_rule", ""))

	const (
		ok  = http.StatusOK
		new = http.StatusCreated
		del = http.StatusNoContent
		no  = http.StatusForbidden
		nf  = http.StatusNotFound
	)
	cases := []ruleCase{
		// view_rule null: admins only.
		{coll: "locked", list: no, get: no, create: no, update: no, delete: no},
		// view_rule "": public reads; null write rules refuse with 403.
		{coll: "readable", list: ok, get: ok, create: no, update: no, delete: no},
		// Everything "": public.
		{coll: "open", list: ok, get: ok, create: new, update: ok, delete: del},
		// An expression view rule no row passes: empty list, 404 single,
		// 404 writes on rows the caller cannot see, 403 create (the new
		// record fails the create rule).
		{coll: "exprview", list: ok, get: nf, create: no, update: nf, delete: nf},
		// Viewable rows whose write rules they fail: 403.
		{coll: "exprwrite", list: ok, get: ok, create: no, update: no, delete: no},
		// Only create is public: the creator may not read.
		{coll: "creatable", list: no, get: no, create: new},
	}
	for _, c := range []string{"locked", "readable", "open", "exprview", "exprwrite", "creatable"} {
		cases = append(cases, ruleCase{coll: c, admin: true, list: ok, get: ok, create: new, update: ok, delete: del})
	}
	// Non-admin updates and deletes where the view rule is null are checked
	// in TestRecordWritesOnAdminOnlyCollection.
	cases[0].update, cases[0].delete = 0, 0

	for _, rc := range cases {
		apitest.Run(t, s, rc.scenarios(s, t))
	}

	apitest.Run(t, s, []apitest.Scenario{
		{
			Name:            "an admin-only collection says so",
			URL:             "/api/v1/locked",
			ExpectedStatus:  http.StatusForbidden,
			ExpectedContent: []string{"Only admins can perform this action"},
		},
		{
			Name:            "an expression view rule no row passes lists nothing to non-admins",
			URL:             "/api/v1/exprview",
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"data":[]`, `"totalItems":0`, `"totalPages":0`},
		},
		{
			Name:            "with skipTotal too",
			URL:             "/api/v1/exprview?skipTotal=1",
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"data":[]`, `"totalItems":-1`},
		},
		{
			Name:               "admins bypass the expression",
			URL:                "/api/v1/exprview",
			Admin:              true,
			ExpectedStatus:     http.StatusOK,
			ExpectedContent:    []string{`"totalItems":`},
			NotExpectedContent: []string{`"totalItems":0`},
		},
	})
}

// TestRecordWritesOnAdminOnlyCollection: SPEC.md's errors table: 403 for
// "admin-only collection for a non-admin"; CONTRACT.md: "null = admin only
// (non-admins get 403)". GET and list say 403; PATCH and DELETE must too.
func TestRecordWritesOnAdminOnlyCollection(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	title := []map[string]any{f("title", "text")}
	s.CreateCollection(t, coll("locked", "base", title))
	s.CreateCollection(t, coll("creatable", "base", title, "create_rule", ""))
	for _, c := range []string{"locked", "creatable"} {
		id := s.CreateRecord(t, c, map[string]any{"title": "x"})["id"].(string)
		apitest.Run(t, s, []apitest.Scenario{
			{Name: c + " get", URL: "/api/v1/" + c + "/" + id, ExpectedStatus: http.StatusForbidden},
			{Name: c + " update", Method: http.MethodPatch, URL: "/api/v1/" + c + "/" + id, Body: map[string]any{"title": "y"}, ExpectedStatus: http.StatusForbidden},
			{Name: c + " delete", Method: http.MethodDelete, URL: "/api/v1/" + c + "/" + id, ExpectedStatus: http.StatusForbidden},
		})
	}
}

func TestHiddenFields(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, public(coll("profiles", "base", []map[string]any{
		f("name", "text"), f("ssn", "text", "hidden", true),
	})))
	id := s.CreateRecord(t, "profiles", map[string]any{"name": "ann", "ssn": "123-45"})["id"].(string)

	apitest.Run(t, s, []apitest.Scenario{
		{
			Name:               "anonymous get does not show it",
			URL:                "/api/v1/profiles/" + id,
			ExpectedStatus:     http.StatusOK,
			ExpectedContent:    []string{`"name":"ann"`},
			NotExpectedContent: []string{"ssn", "123-45"},
		},
		{
			Name:               "anonymous list does not show it",
			URL:                "/api/v1/profiles",
			ExpectedStatus:     http.StatusOK,
			NotExpectedContent: []string{"ssn", "123-45"},
		},
		{
			Name:            "admin get shows it",
			URL:             "/api/v1/profiles/" + id,
			Admin:           true,
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"ssn":"123-45"`},
		},
		{
			Name:               "an anonymous create may set it but does not see it",
			Method:             http.MethodPost,
			URL:                "/api/v1/profiles",
			Body:               map[string]any{"name": "bob", "ssn": "hidden-ssn-value"},
			ExpectedStatus:     http.StatusCreated,
			NotExpectedContent: []string{"ssn", "hidden-ssn-value"},
		},
		{
			Name:               "an anonymous update does not see it",
			Method:             http.MethodPatch,
			URL:                "/api/v1/profiles/" + id,
			Body:               map[string]any{"name": "ann2"},
			ExpectedStatus:     http.StatusOK,
			NotExpectedContent: []string{"ssn", "123-45"},
		},
		{
			Name:            "an admin update does",
			Method:          http.MethodPatch,
			URL:             "/api/v1/profiles/" + id,
			Admin:           true,
			Body:            map[string]any{},
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"ssn":"123-45"`},
		},
	})
}

func TestAuthRecords(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, coll("users", "auth", []map[string]any{f("nickname", "text")}, "view_rule", "", "create_rule", "", "update_rule", ""))
	const pw = "a-long-password" // 15 characters
	var userID string

	private := []string{`"password"`, "argon2", `"password_reset_at"`, pw}
	apitest.Run(t, s, []apitest.Scenario{
		{
			Name:           "email and password are required",
			Method:         http.MethodPost,
			URL:            "/api/v1/users",
			Body:           map[string]any{"nickname": "x"},
			ExpectedStatus: http.StatusUnprocessableEntity,
			AfterFunc:      apitest.Details("email", "password"),
		},
		{
			Name:           "a bad email is 422",
			Method:         http.MethodPost,
			URL:            "/api/v1/users",
			Body:           map[string]any{"email": "nope", "password": pw},
			ExpectedStatus: http.StatusUnprocessableEntity,
			AfterFunc:      apitest.Details("email"),
		},
		{
			Name:            "the password policy applies (min 12)",
			Method:          http.MethodPost,
			URL:             "/api/v1/users",
			Body:            map[string]any{"email": "a@example.com", "password": "elevenchars"},
			ExpectedStatus:  http.StatusUnprocessableEntity,
			ExpectedContent: []string{"at least 12 characters"},
			AfterFunc:       apitest.Details("password"),
		},
		{
			Name:               "create answers the account without private columns",
			Method:             http.MethodPost,
			URL:                "/api/v1/users",
			Body:               map[string]any{"email": "Ann@Example.com", "password": pw, "nickname": "ann", "email_verified": true, "is_anonymous": true, "password_reset_at": 5},
			ExpectedStatus:     http.StatusCreated,
			ExpectedContent:    []string{`"email":"Ann@example.com"`, `"email_verified":false`, `"is_anonymous":false`, `"nickname":"ann"`},
			NotExpectedContent: private,
			AfterFunc: func(t testing.TB, s *apitest.Server, body []byte) {
				userID = apitest.Obj(t, apitest.DecodeMap(t, body)["data"])["id"].(string)
			},
		},
		{
			Name:           "a duplicate email in another case is 422 on email",
			Method:         http.MethodPost,
			URL:            "/api/v1/users",
			Body:           map[string]any{"email": "ANN@example.COM", "password": pw},
			ExpectedStatus: http.StatusUnprocessableEntity,
			AfterFunc:      apitest.Details("email"),
		},
		{
			Name:               "admins may set email_verified",
			Method:             http.MethodPost,
			URL:                "/api/v1/users",
			Admin:              true,
			Body:               map[string]any{"email": "bob@example.com", "password": pw, "email_verified": true, "is_anonymous": true},
			ExpectedStatus:     http.StatusCreated,
			ExpectedContent:    []string{`"email_verified":true`, `"is_anonymous":false`},
			NotExpectedContent: private,
		},
		{
			Name:               "list never shows private columns, even to admins",
			URL:                "/api/v1/users",
			Admin:              true,
			ExpectedStatus:     http.StatusOK,
			ExpectedContent:    []string{`"totalItems":2`},
			NotExpectedContent: private,
		},
		{
			Name:               "sorting by password is ignored",
			URL:                "/api/v1/users?sort=password&fields=password,email",
			Admin:              true,
			ExpectedStatus:     http.StatusOK,
			NotExpectedContent: private,
		},
	})

	apitest.Run(t, s, []apitest.Scenario{
		{
			Name:               "get never shows private columns",
			URL:                "/api/v1/users/" + userID,
			ExpectedStatus:     http.StatusOK,
			NotExpectedContent: private,
		},
		{
			Name:           "the password cannot be cleared",
			Method:         http.MethodPatch,
			URL:            "/api/v1/users/" + userID,
			Body:           map[string]any{"password": nil},
			ExpectedStatus: http.StatusUnprocessableEntity,
			AfterFunc:      apitest.Details("password"),
		},
		{
			Name:           "a new password follows the policy",
			Method:         http.MethodPatch,
			URL:            "/api/v1/users/" + userID,
			Body:           map[string]any{"password": "short"},
			ExpectedStatus: http.StatusUnprocessableEntity,
			AfterFunc:      apitest.Details("password"),
		},
		{
			Name:               "a non-admin cannot verify the email",
			Method:             http.MethodPatch,
			URL:                "/api/v1/users/" + userID,
			Body:               map[string]any{"email_verified": true, "password": "another-long-password", "oldPassword": pw},
			ExpectedStatus:     http.StatusOK,
			ExpectedContent:    []string{`"email_verified":false`},
			NotExpectedContent: private,
		},
		{
			Name:           "changing the email to a taken one is 422",
			Method:         http.MethodPatch,
			URL:            "/api/v1/users/" + userID,
			Body:           map[string]any{"email": "BOB@example.com"},
			ExpectedStatus: http.StatusUnprocessableEntity,
			AfterFunc:      apitest.Details("email"),
		},
		{
			Name:            "an admin can verify the email",
			Method:          http.MethodPatch,
			URL:             "/api/v1/users/" + userID,
			Admin:           true,
			Body:            map[string]any{"email_verified": true},
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"email_verified":true`},
		},
		{
			Name:   "a stricter policy set in settings applies at once",
			Method: http.MethodPost,
			URL:    "/api/v1/users",
			BeforeFunc: func(t testing.TB, s *apitest.Server) {
				s.MustAdmin(t, http.StatusOK, http.MethodPatch, settingsURL, map[string]any{
					"password.min_length": 20, "password.require_digit": true,
				})
			},
			Body:            map[string]any{"email": "carl@example.com", "password": "only-sixteen-chr"},
			ExpectedStatus:  http.StatusUnprocessableEntity,
			ExpectedContent: []string{"at least 20 characters"},
			AfterFunc:       apitest.Details("password"),
		},
		{
			Name:            "character classes apply",
			Method:          http.MethodPost,
			URL:             "/api/v1/users",
			Body:            map[string]any{"email": "carl@example.com", "password": "twenty-characters-no-digit"},
			ExpectedStatus:  http.StatusUnprocessableEntity,
			ExpectedContent: []string{"must contain a digit"},
		},
		{
			Name:           "and a conforming password passes",
			Method:         http.MethodPost,
			URL:            "/api/v1/users",
			Body:           map[string]any{"email": "carl@example.com", "password": "twenty-characters-with-1-digit"},
			ExpectedStatus: http.StatusCreated,
		},
	})
}

// TestAuthRecordEmptyPassword: an auth record needs a password that passes
// the policy; an empty string must not create a password-less account nor
// clear the password of an existing one.
func TestAuthRecordEmptyPassword(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, public(coll("users", "auth", nil)))
	id := s.CreateRecord(t, "users", map[string]any{"email": "b@example.com", "password": "long-enough-password"})["id"].(string)
	apitest.Run(t, s, []apitest.Scenario{
		{
			Name:           "create with an empty password is 422",
			Method:         http.MethodPost,
			URL:            "/api/v1/users",
			Body:           map[string]any{"email": "a@example.com", "password": ""},
			ExpectedStatus: http.StatusUnprocessableEntity,
			AfterFunc:      apitest.Details("password"),
		},
		{
			Name:           "update to an empty password is 422",
			Method:         http.MethodPatch,
			URL:            "/api/v1/users/" + id,
			Body:           map[string]any{"password": ""},
			ExpectedStatus: http.StatusUnprocessableEntity,
			AfterFunc:      apitest.Details("password"),
		},
	})
}
