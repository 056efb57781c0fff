package api_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"svcd/api/apitest"
)

// Mistakes in a collection definition are refused where they are made: a
// key the definition does not have (another product's name, a typo), an
// option of another field type, a rule that does not compile. Read-only
// members of a GET answer are ignored, so a GET answer can be edited and
// sent back.

// gone is an AfterFunc checking that collection name does not exist.
func gone(name string) func(t testing.TB, s *apitest.Server, body []byte) {
	return func(t testing.TB, s *apitest.Server, body []byte) {
		t.Helper()
		if res, b := s.AdminDo(t, http.MethodGet, collectionsURL+"/"+name, nil); res.StatusCode != http.StatusNotFound {
			t.Errorf("collection %s exists after a refused save: %d %s", name, res.StatusCode, b)
		}
	}
}

func TestCollectionUnknownKeysRefused(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, coll("notes", "base", []map[string]any{f("title", "text")}, "view_rule", ""))
	apitest.Run(t, s, []apitest.Scenario{
		{
			Name: "PocketBase's listRule and schema at the top level", Method: http.MethodPost, URL: collectionsURL, Admin: true,
			Body:           map[string]any{"name": "pb", "listRule": "", "schema": []any{map[string]any{"name": "title", "type": "text"}}},
			ExpectedStatus: http.StatusUnprocessableEntity,
			ExpectedContent: []string{
				`"listRule":"unknown key (did you mean \"view_rule\"?)"`,
				`"schema":"unknown key (did you mean \"fields\"?)"`,
			},
			AfterFunc: gone("pb"),
		},
		{
			Name: "a typo in the second field names the field and the key", Method: http.MethodPost, URL: collectionsURL, Admin: true,
			Body:            coll("typo", "base", []map[string]any{f("a", "text"), f("b", "text", "requried", true)}),
			ExpectedStatus:  http.StatusUnprocessableEntity,
			ExpectedContent: []string{`"details":{"fields.1.requried":"unknown key (did you mean \"required\"?)"}`},
			AfterFunc:       gone("typo"),
		},
		{
			Name: "a key in the wrong case is not taken for the right one", Method: http.MethodPost, URL: collectionsURL, Admin: true,
			Body:            coll("cased", "base", []map[string]any{f("a", "text", "Required", true)}, "View_Rule", ""),
			ExpectedStatus:  http.StatusUnprocessableEntity,
			ExpectedContent: []string{`"fields.0.Required":"unknown key (did you mean \"required\"?)"`, `"View_Rule":"unknown key (did you mean \"view_rule\"?)"`},
		},
		{
			Name: "an option of another field type", Method: http.MethodPost, URL: collectionsURL, Admin: true,
			Body: coll("wrongopt", "base", []map[string]any{
				f("title", "text", "values", []string{"a", "b"}), f("done", "bool", "max", 1), f("cover", "file", "max_size", 10),
			}),
			ExpectedStatus: http.StatusUnprocessableEntity,
			ExpectedContent: []string{
				`"fields.0.values":"does not apply to a text field"`, `"fields.1.max":"does not apply to a bool field"`,
				`"fields.2.max_size":"does not apply to a file field (did you mean \"maxSize\"?)"`,
			},
			AfterFunc: gone("wrongopt"),
		},
		{
			Name: "an option of another type turned off changes nothing and is accepted", Method: http.MethodPost, URL: collectionsURL, Admin: true,
			Body:               coll("offopt", "base", []map[string]any{f("n", "number", "searchable", false, "values", []string{}), f("b", "bool", "max", nil)}),
			ExpectedStatus:     http.StatusCreated,
			NotExpectedContent: []string{`"searchable"`, `"values"`},
		},
		{
			Name: "a member of the wrong JSON kind names its field", Method: http.MethodPost, URL: collectionsURL, Admin: true,
			Body:            coll("kinds", "base", []map[string]any{f("a", "text"), f("n", "number", "max", "5")}),
			ExpectedStatus:  http.StatusUnprocessableEntity,
			ExpectedContent: []string{`"details":{"fields.1.max":"must be a number"}`},
		},
		{
			Name: "an unknown auth option", Method: http.MethodPost, URL: collectionsURL, Admin: true,
			Body:            coll("members", "auth", nil, "auth_options", map[string]any{"password": true, "otpp": true}),
			ExpectedStatus:  http.StatusUnprocessableEntity,
			ExpectedContent: []string{`"auth_options.otpp":"unknown key (did you mean \"otp\"?)"`},
			AfterFunc:       gone("members"),
		},
		{
			Name: "PATCH: an unknown key changes nothing", Method: http.MethodPatch, URL: collectionsURL + "/notes", Admin: true,
			Body:            map[string]any{"createRule": ""},
			ExpectedStatus:  http.StatusUnprocessableEntity,
			ExpectedContent: []string{`"createRule":"unknown key (did you mean \"create_rule\"?)"`},
			AfterFunc: func(t testing.TB, s *apitest.Server, _ []byte) {
				c := apitest.Obj(t, s.MustAdmin(t, http.StatusOK, http.MethodGet, collectionsURL+"/notes", nil)["data"])
				if c["create_rule"] != nil {
					t.Errorf("create_rule = %v after a refused PATCH", c["create_rule"])
				}
			},
		},
		{
			Name: "PATCH: a typo in a field", Method: http.MethodPatch, URL: collectionsURL + "/notes", Admin: true,
			Body:            map[string]any{"fields": []map[string]any{f("title", "text", "hiden", true)}},
			ExpectedStatus:  http.StatusUnprocessableEntity,
			ExpectedContent: []string{`"fields.0.hiden":"unknown key (did you mean \"hidden\"?)"`},
		},
		{
			Name: "PATCH of an unknown collection is still 404", Method: http.MethodPatch, URL: collectionsURL + "/nope", Admin: true,
			Body: map[string]any{"listRule": ""}, ExpectedStatus: http.StatusNotFound,
		},
	})
}

// TestCollectionRoundTrip: a GET answer sent back as a PATCH body, as is
// or edited, is accepted: its read-only members (id, created, updated,
// rule_errors) are ignored and its fields carry only their own options.
func TestCollectionRoundTrip(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, coll("people", "auth", []map[string]any{f("nickname", "text", "max", 40)},
		"auth_options", map[string]any{"otp": true}, "view_rule", ""))
	s.CreateCollection(t, coll("posts", "base", []map[string]any{
		f("title", "text", "required", true, "min", 3, "max", 80, "pattern", "[a-z ]+", "searchable", true),
		f("contact", "email", "domains_except", []string{"spam.example"}),
		f("views", "number", "integer", true, "min", 0),
		f("draft", "bool"),
		f("at", "date", "min", 0, "max", 4102444800),
		f("touched", "autodate", "on_create", true, "on_update", true),
		f("tags", "select", "values", []string{"go", "raft"}, "multiple", true, "max_select", 2),
		f("meta", "json", "max_size", 1024),
		f("place", "geoPoint"),
		f("author", "relation", "collection", "people", "cascade", true),
		f("cover", "file", "maxSize", 1024, "mimeTypes", []string{"image/png"}, "viewRule", "", "protected", true),
		f("secret", "password", "min", 8),
		f("embedding", "vector", "dimensions", 3),
	}, "view_rule", "author.nickname != '' || draft = false", "create_rule", "@request.auth.nickname != ''"))

	for _, name := range []string{"people", "posts"} {
		got := apitest.Obj(t, s.MustAdmin(t, http.StatusOK, http.MethodGet, collectionsURL+"/"+name, nil)["data"])
		apitest.Run(t, s, []apitest.Scenario{
			{
				Name: name + ": the GET answer sent back unchanged", Method: http.MethodPatch, URL: collectionsURL + "/" + name, Admin: true,
				Body: got, ExpectedStatus: http.StatusOK,
				AfterFunc: func(t testing.TB, s *apitest.Server, body []byte) {
					again := apitest.Obj(t, apitest.DecodeMap(t, body)["data"])
					for _, k := range []string{"id", "created", "fields", "view_rule", "create_rule", "auth_options"} {
						if !jsonEqual(got[k], again[k]) {
							t.Errorf("%s: %s was %v, is %v after the round trip", name, k, got[k], again[k])
						}
					}
				},
			},
		})
		// The same, edited, and from the list answer.
		list := apitest.List(t, s.MustAdmin(t, http.StatusOK, http.MethodGet, collectionsURL, nil)["data"])
		for _, c := range list {
			c := apitest.Obj(t, c)
			if c["name"] != name {
				continue
			}
			c["history_enabled"] = true
			c["created"], c["updated"], c["id"] = 1, 2, "col_forged00000000"
			out := apitest.Obj(t, s.MustAdmin(t, http.StatusOK, http.MethodPatch, collectionsURL+"/"+name, c)["data"])
			if out["history_enabled"] != true || out["id"] == "col_forged00000000" || apitest.Int(t, out["created"]) == 1 {
				t.Errorf("%s: edited round trip gave %v", name, out)
			}
		}
	}
}

// TestRulesRefusedAtSave: a rule that does not parse, or names what the
// schema does not have, is a 422 naming the rule, the offset and the
// reason; whatever the language can say about what exists is accepted.
func TestRulesRefusedAtSave(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, coll("members", "auth", []map[string]any{f("nickname", "text"), f("level", "number")}, "view_rule", ""))
	s.CreateCollection(t, coll("authors", "base", []map[string]any{f("name", "text"), f("hidden_note", "text", "hidden", true)}, "view_rule", ""))
	s.CreateCollection(t, coll("quotas", "base", []map[string]any{f("left", "number")}, "view_rule", ""))
	s.CreateCollection(t, coll("posts", "base", []map[string]any{
		f("title", "text"), f("author", "relation", "collection", "authors"), f("tags", "select", "values", []string{"a", "b"}, "multiple", true),
		f("meta", "json"), f("place", "geoPoint"), f("status", "text"),
	}, "view_rule", ""))
	s.CreateCollection(t, coll("comments", "base", []map[string]any{f("post", "relation", "collection", "posts"), f("text", "text")}, "view_rule", ""))

	refused := func(name string, body map[string]any, want ...string) apitest.Scenario {
		return apitest.Scenario{
			Name: name, Method: http.MethodPost, URL: collectionsURL, Admin: true, Body: body,
			ExpectedStatus: http.StatusUnprocessableEntity, ExpectedContent: want, AfterFunc: gone(body["name"].(string)),
		}
	}
	fields := []map[string]any{f("title", "text"), f("author", "relation", "collection", "authors")}
	apitest.Run(t, s, []apitest.Scenario{
		refused("a rule that does not parse", coll("r1", "base", fields, "view_rule", "title = ~ 'x'"),
			`"details":{"view_rule":"expected a value, found '~' at offset 8"}`),
		refused("an unknown field", coll("r2", "base", fields, "view_rule", "", "create_rule", `title != "" && titel = "x"`),
			`"details":{"create_rule":"unknown field \"titel\" at offset 15"}`),
		refused("an unknown field of a relation's target", coll("r3", "base", fields, "update_rule", "author.nmae = 'x'"),
			`"update_rule":"unknown field \"author.nmae\" at offset 0"`),
		refused("an unknown collection", coll("r4", "base", fields, "delete_rule", "@collection.quota.left > 0"),
			`"delete_rule":"unknown collection \"quota\" at offset 0"`),
		refused("an unknown back-relation", coll("r5", "base", fields, "view_rule", "comments_via_author.text ?= 'x'"),
			`"view_rule":"comments.author is not a relation to r5 at offset 0"`),
		refused("an @request.auth field no auth collection has", coll("r6", "base", fields, "view_rule", "@request.auth.nicknam = 'x'"),
			`"view_rule":"unknown field \"nicknam\" of @request.auth (no auth collection has it) at offset 0"`),
		refused("a file field's view rule", coll("r7", "base", append(fields, f("cover", "file", "viewRule", "titel = 'x'"))),
			`"fields.2.viewRule":"unknown field \"titel\" at offset 0"`),
		refused("several rules at once", coll("r8", "base", fields, "view_rule", "((", "create_rule", "x = 1"),
			`"view_rule":"expected a value, found end of expression at offset 2"`, `"create_rule":"unknown field \"x\" at offset 0"`),
		{
			Name: "everything the language says about what exists is accepted", Method: http.MethodPatch, URL: collectionsURL + "/posts", Admin: true,
			Body: map[string]any{
				"view_rule": `author.name ~ "a" && author.hidden_note != "x" && tags:each != "b" && tags:length > 0 && tags ?= "a" && ` +
					`meta.a.b.0 = 1 && comments_via_post.text ?~ "y" && @collection.quotas.left ?> 0 && title:lower = "x" && ` +
					`created > @todayStart && geoDistance(place.lon, place.lat, 13.4, 52.5) < 25 && strftime("%Y", created) = "2026" && ` +
					`@request.auth.nickname != "" && @request.auth.level >= 1 && @request.auth.collectionName = "members" && ` +
					`@request.headers.x_tenant = "t" && @request.query.q:isset = true && @request.method = "GET"`,
				"update_rule": `@request.body.status:changed = false && @request.auth.id != "" && @request.auth.email_verified = true`,
			},
			ExpectedStatus: http.StatusOK,
		},
		{
			Name: "a relation to itself, created with a rule through it", Method: http.MethodPost, URL: collectionsURL, Admin: true,
			Body:           coll("nodes", "base", []map[string]any{f("label", "text"), f("parent", "relation", "collection", "nodes")}, "view_rule", "parent.label != 'secret'"),
			ExpectedStatus: http.StatusCreated,
		},
		{
			Name: "@request.auth may read a field the same save adds to an auth collection", Method: http.MethodPost, URL: collectionsURL, Admin: true,
			Body:           coll("staff", "auth", []map[string]any{f("grade", "number")}, "view_rule", "@request.auth.grade > 1"),
			ExpectedStatus: http.StatusCreated,
		},
		{
			Name: "a PATCH removing a field its own rule reads is refused", Method: http.MethodPatch, URL: collectionsURL + "/comments", Admin: true,
			BeforeFunc: func(t testing.TB, s *apitest.Server) {
				s.MustAdmin(t, http.StatusOK, http.MethodPatch, collectionsURL+"/comments", map[string]any{"view_rule": "text != 'spam'"})
			},
			Body:            map[string]any{"fields": []map[string]any{f("post", "relation", "collection", "posts")}},
			ExpectedStatus:  http.StatusUnprocessableEntity,
			ExpectedContent: []string{`"view_rule":"unknown field \"text\" at offset 0"`},
		},
		{
			Name: "a rename: rules reach the collection by its new name only", Method: http.MethodPatch, URL: collectionsURL + "/quotas", Admin: true,
			Body:            map[string]any{"name": "limits", "view_rule": "@collection.quotas.left > 0"},
			ExpectedStatus:  http.StatusUnprocessableEntity,
			ExpectedContent: []string{`"view_rule":"unknown collection \"quotas\" at offset 0"`},
		},
	})
}

// TestRuleBrokenLater: a rule that compiled when saved and no longer does
// (an auth field it reads was removed from every auth collection, a
// relation's target lost a field) denies everyone but admins, and the
// admin view of its collection says why. Saving the collection again with
// the broken rule unchanged is allowed; a new broken rule is not.
func TestRuleBrokenLater(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, coll("members", "auth", []map[string]any{f("nickname", "text")}, "view_rule", ""))
	s.CreateCollection(t, coll("authors", "base", []map[string]any{f("name", "text"), f("bio", "text")}, "view_rule", ""))
	// Both rules admit a guest while they compile (a guest's
	// @request.auth.nickname reads "").
	s.CreateCollection(t, coll("notes", "base", []map[string]any{f("title", "text"), f("author", "relation", "collection", "authors")},
		"view_rule", "@request.auth.nickname != 'banned'", "create_rule", "author.bio != 'x'", "update_rule", ""))
	// A write rule is checked inside the state machine: the auth fields
	// it may read are those of the log index it applies at.
	s.CreateCollection(t, coll("drafts", "base", []map[string]any{f("title", "text")},
		"view_rule", "", "create_rule", "@request.auth.nickname != 'banned'"))
	note := s.CreateRecord(t, "notes", map[string]any{"title": "a"})["id"].(string)
	viewRule := "@request.auth.nickname != 'banned'"

	apitest.Run(t, s, []apitest.Scenario{
		{Name: "while the rules compile a guest lists the note", URL: "/api/v1/notes", ExpectedStatus: http.StatusOK, AfterFunc: wantIDs(note)},
		{Name: "and creates one", Method: http.MethodPost, URL: "/api/v1/notes", Body: map[string]any{"title": "b"}, ExpectedStatus: http.StatusCreated},
		{Name: "and a draft", Method: http.MethodPost, URL: "/api/v1/drafts", Body: map[string]any{"title": "b"}, ExpectedStatus: http.StatusCreated},
		{Name: "no rule_errors while every rule compiles", URL: collectionsURL + "/notes", Admin: true, ExpectedStatus: http.StatusOK,
			NotExpectedContent: []string{"rule_errors"}},
		{
			Name: "removing the auth field and the target's field is allowed", Method: http.MethodPatch, URL: collectionsURL + "/members", Admin: true,
			Body: map[string]any{"fields": []any{}}, ExpectedStatus: http.StatusOK,
			AfterFunc: func(t testing.TB, s *apitest.Server, _ []byte) {
				s.MustAdmin(t, http.StatusOK, http.MethodPatch, collectionsURL+"/authors", map[string]any{"fields": []map[string]any{f("name", "text")}})
			},
		},
		{Name: "the broken view rule denies the list", URL: "/api/v1/notes", ExpectedStatus: http.StatusOK, AfterFunc: wantIDs()},
		{Name: "and the read", URL: "/api/v1/notes/" + note, ExpectedStatus: http.StatusNotFound},
		{Name: "the broken create rule denies", Method: http.MethodPost, URL: "/api/v1/notes", Body: map[string]any{"title": "c"}, ExpectedStatus: http.StatusForbidden},
		{Name: "the broken create rule of drafts denies at apply", Method: http.MethodPost, URL: "/api/v1/drafts", Body: map[string]any{"title": "c"}, ExpectedStatus: http.StatusForbidden},
		{Name: "admins still list", URL: "/api/v1/notes", Admin: true, ExpectedStatus: http.StatusOK},
		{
			Name: "the admin view says why", URL: collectionsURL + "/notes", Admin: true, ExpectedStatus: http.StatusOK,
			ExpectedContent: []string{
				`"rule_errors":{`,
				`"view_rule":"unknown field \"nickname\" of @request.auth (no auth collection has it) at offset 0"`,
				`"create_rule":"unknown field \"author.bio\" at offset 0"`,
			},
			NotExpectedContent: []string{`"update_rule":"unknown`},
		},
		{Name: "the list of collections too", URL: collectionsURL, Admin: true, ExpectedStatus: http.StatusOK,
			ExpectedContent: []string{`"rule_errors":{"create_rule":"unknown field \"author.bio\" at offset 0"`}},
		{
			Name: "saving the collection with its broken rules unchanged is allowed", Method: http.MethodPatch, URL: collectionsURL + "/notes", Admin: true,
			Body: map[string]any{"history_enabled": true, "view_rule": viewRule}, ExpectedStatus: http.StatusOK,
			ExpectedContent: []string{`"history_enabled":true`, `"rule_errors":{`},
		},
		{
			Name: "a broken rule that is new is refused", Method: http.MethodPatch, URL: collectionsURL + "/notes", Admin: true,
			Body: map[string]any{"view_rule": "@request.auth.nickname = 'friend'"}, ExpectedStatus: http.StatusUnprocessableEntity,
			ExpectedContent: []string{`"view_rule":"unknown field \"nickname\" of @request.auth (no auth collection has it) at offset 0"`},
		},
		{
			Name: "fixed rules: the errors go and the guest is admitted again", Method: http.MethodPatch, URL: collectionsURL + "/notes", Admin: true,
			Body: map[string]any{"view_rule": "@request.auth.id != 'banned'", "create_rule": "author.name != 'x'"}, ExpectedStatus: http.StatusOK,
			NotExpectedContent: []string{"rule_errors"},
			AfterFunc: func(t testing.TB, s *apitest.Server, _ []byte) {
				res, body := s.Do(t, http.MethodGet, "/api/v1/notes", nil, nil)
				if res.StatusCode != http.StatusOK || len(dataIDs(t, body)) != 2 {
					t.Errorf("after the fix a guest lists %d %s", res.StatusCode, body)
				}
			},
		},
	})
}

// jsonEqual reports whether a and b encode to the same JSON.
func jsonEqual(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}
