package api_test

import (
	"net/http"
	"net/url"
	"slices"
	"testing"

	"svcd/api/apitest"
)

// Expand (SPEC.md "Expand", docs/filters.md "Expand"): forward relations
// expand to an object (single) or an array (multiple), `a.b` nests,
// `<coll>_via_<field>` expands to the array of records pointing here,
// several keys at once, unknown keys ignored, and every expanded record
// passes its own collection's view rule for the caller.

type expandFixture struct {
	acme, ann, bob, red, blue, secret, seen, unseen string
	art1, art2, art3, note1, note2, note3           string
}

// seedArticles:
//
//	art1 "one":   author ann (company acme), labels [blue red], secret s, guard unseen, guards [unseen seen],
//	              hidden_author bob; notes "first", "second"
//	art2 "two":   author bob (no company), labels [], guard seen; note "third"
//	art3 "three": nothing
//
// secrets are admin-only (view_rule null); guarded admits visible = true
// only; people.nick is hidden.
func seedArticles(t testing.TB, s *apitest.Server) expandFixture {
	t.Helper()
	name := []map[string]any{f("name", "text")}
	s.CreateCollection(t, coll("companies", "base", name, "view_rule", ""))
	s.CreateCollection(t, coll("people", "base", []map[string]any{
		f("name", "text"), f("company", "relation", "collection", "companies"), f("nick", "text", "hidden", true),
	}, "view_rule", ""))
	s.CreateCollection(t, coll("labels", "base", name, "view_rule", ""))
	s.CreateCollection(t, coll("secrets", "base", name))
	s.CreateCollection(t, coll("guarded", "base", []map[string]any{f("name", "text"), f("visible", "bool")}, "view_rule", "visible = true"))
	s.CreateCollection(t, coll("articles", "base", []map[string]any{
		f("title", "text"),
		f("author", "relation", "collection", "people"),
		f("labels", "relation", "collection", "labels", "multiple", true),
		f("secret", "relation", "collection", "secrets"),
		f("guard", "relation", "collection", "guarded"),
		f("guards", "relation", "collection", "guarded", "multiple", true),
		f("hidden_author", "relation", "collection", "people", "hidden", true),
	}, "view_rule", ""))
	s.CreateCollection(t, coll("notes", "base", []map[string]any{
		f("text", "text"), f("article", "relation", "collection", "articles"),
	}, "view_rule", ""))
	s.CreateCollection(t, coll("hnotes", "base", []map[string]any{
		f("text", "text"), f("article", "relation", "collection", "articles", "hidden", true),
	}, "view_rule", ""))

	mk := func(c string, rec map[string]any) string { return s.CreateRecord(t, c, rec)["id"].(string) }
	var x expandFixture
	x.acme = mk("companies", map[string]any{"name": "acme"})
	x.ann = mk("people", map[string]any{"name": "ann", "company": x.acme, "nick": "annie"})
	x.bob = mk("people", map[string]any{"name": "bob"})
	x.red = mk("labels", map[string]any{"name": "red"})
	x.blue = mk("labels", map[string]any{"name": "blue"})
	x.secret = mk("secrets", map[string]any{"name": "s"})
	x.seen = mk("guarded", map[string]any{"name": "seen", "visible": true})
	x.unseen = mk("guarded", map[string]any{"name": "unseen", "visible": false})
	x.art1 = mk("articles", map[string]any{"id": rid("art1"), "title": "one", "author": x.ann, "labels": []string{x.blue, x.red},
		"secret": x.secret, "guard": x.unseen, "guards": []string{x.unseen, x.seen}, "hidden_author": x.bob})
	x.art2 = mk("articles", map[string]any{"id": rid("art2"), "title": "two", "author": x.bob, "labels": []string{}, "guard": x.seen})
	x.art3 = mk("articles", map[string]any{"id": rid("art3"), "title": "three"})
	x.note1 = mk("notes", map[string]any{"text": "first", "article": x.art1})
	x.note2 = mk("notes", map[string]any{"text": "second", "article": x.art1})
	x.note3 = mk("notes", map[string]any{"text": "third", "article": x.art2})
	mk("hnotes", map[string]any{"text": "hidden link", "article": x.art1})
	return x
}

// expandOf returns the "expand" member of the record id in a list or
// single-record answer (nil when absent).
func expandOf(t testing.TB, body []byte, id string) map[string]any {
	t.Helper()
	data := apitest.DecodeMap(t, body)["data"]
	recs, isList := data.([]any)
	if !isList {
		recs = []any{data}
	}
	for _, r := range recs {
		rec := apitest.Obj(t, r)
		if rec["id"] == id {
			if e, ok := rec["expand"]; ok {
				return apitest.Obj(t, e)
			}
			return nil
		}
	}
	t.Fatalf("record %s not in the answer: %s", id, body)
	return nil
}

// expandCheck is an AfterFunc running check on the expand member of each
// record named in want.
type expandCheck map[string]func(t testing.TB, exp map[string]any)

func (c expandCheck) after() func(t testing.TB, s *apitest.Server, body []byte) {
	return func(t testing.TB, s *apitest.Server, body []byte) {
		t.Helper()
		for id, check := range c {
			check(t, expandOf(t, body, id))
		}
	}
}

// one asserts exp[key] is a record object with the given name or title
// and returns it.
func one(t testing.TB, exp map[string]any, key, id string) map[string]any {
	t.Helper()
	v, ok := exp[key]
	if !ok {
		t.Fatalf("expand lacks %q: %v", key, exp)
	}
	rec, isObj := v.(map[string]any)
	if !isObj {
		t.Fatalf("expand.%s is %T, want an object: %v", key, v, v)
	}
	if rec["id"] != id {
		t.Errorf("expand.%s.id = %v, want %s", key, rec["id"], id)
	}
	return rec
}

// many asserts exp[key] is an array of records with the given ids, in
// order when ordered is set, and returns it.
func many(t testing.TB, exp map[string]any, key string, ordered bool, ids ...string) []any {
	t.Helper()
	v, ok := exp[key]
	if !ok {
		t.Fatalf("expand lacks %q: %v", key, exp)
	}
	list, isList := v.([]any)
	if !isList {
		t.Fatalf("expand.%s is %T, want an array: %v", key, v, v)
	}
	var got []string
	for _, r := range list {
		got = append(got, apitest.Obj(t, r)["id"].(string))
	}
	if ordered && !slices.Equal(got, ids) || !ordered && !sameSet(got, ids) {
		t.Errorf("expand.%s = %v, want %v", key, got, ids)
	}
	return list
}

func absent(keys ...string) func(t testing.TB, exp map[string]any) {
	return func(t testing.TB, exp map[string]any) {
		t.Helper()
		for _, k := range keys {
			if v, ok := exp[k]; ok {
				t.Errorf("expand.%s present: %v", k, v)
			}
		}
	}
}

func TestExpand(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	x := seedArticles(t, s)
	list := "/api/v1/articles?sort=title&expand="
	get := func(id, expand string) string { return "/api/v1/articles/" + id + "?expand=" + url.QueryEscape(expand) }

	apitest.Run(t, s, []apitest.Scenario{
		{
			Name: "forward single: an object", URL: list + "author", ExpectedStatus: http.StatusOK,
			NotExpectedContent: []string{"annie"}, // the target's hidden field stays hidden
			AfterFunc: expandCheck{
				x.art1: func(t testing.TB, e map[string]any) {
					if one(t, e, "author", x.ann)["name"] != "ann" {
						t.Errorf("author: %v", e["author"])
					}
				},
				x.art2: func(t testing.TB, e map[string]any) { one(t, e, "author", x.bob) },
				x.art3: absent("author"),
			}.after(),
		},
		{
			Name: "forward multiple: an array in the stored order", URL: list + "labels", ExpectedStatus: http.StatusOK,
			AfterFunc: expandCheck{
				x.art1: func(t testing.TB, e map[string]any) { many(t, e, "labels", true, x.blue, x.red) },
				x.art2: func(t testing.TB, e map[string]any) {
					if l, ok := e["labels"]; ok && len(apitest.List(t, l)) != 0 {
						t.Errorf("labels of art2: %v", l)
					}
				},
			}.after(),
		},
		{
			Name: "nested a.b", URL: list + "author.company", ExpectedStatus: http.StatusOK,
			AfterFunc: expandCheck{
				x.art1: func(t testing.TB, e map[string]any) {
					author := one(t, e, "author", x.ann)
					company := one(t, apitest.Obj(t, author["expand"]), "company", x.acme)
					if company["name"] != "acme" {
						t.Errorf("company: %v", company)
					}
				},
				x.art2: func(t testing.TB, e map[string]any) {
					if ex, ok := one(t, e, "author", x.bob)["expand"]; ok {
						absent("company")(t, apitest.Obj(t, ex))
					}
				},
			}.after(),
		},
		{
			Name: "back-relation: an array of the records pointing here", URL: list + "notes_via_article", ExpectedStatus: http.StatusOK,
			AfterFunc: expandCheck{
				x.art1: func(t testing.TB, e map[string]any) { many(t, e, "notes_via_article", false, x.note1, x.note2) },
				x.art2: func(t testing.TB, e map[string]any) { many(t, e, "notes_via_article", false, x.note3) },
				x.art3: func(t testing.TB, e map[string]any) {
					if v, ok := e["notes_via_article"]; ok && len(apitest.List(t, v)) != 0 {
						t.Errorf("art3 notes: %v", v)
					}
				},
			}.after(),
		},
		{
			Name: "nested back-relation", URL: list + "author.articles_via_author", ExpectedStatus: http.StatusOK,
			AfterFunc: expandCheck{
				x.art1: func(t testing.TB, e map[string]any) {
					many(t, apitest.Obj(t, one(t, e, "author", x.ann)["expand"]), "articles_via_author", false, x.art1)
				},
			}.after(),
		},
		{
			Name: "several at once", URL: list + "author,labels,notes_via_article,author.company", ExpectedStatus: http.StatusOK,
			AfterFunc: expandCheck{
				x.art1: func(t testing.TB, e map[string]any) {
					one(t, apitest.Obj(t, one(t, e, "author", x.ann)["expand"]), "company", x.acme)
					many(t, e, "labels", true, x.blue, x.red)
					many(t, e, "notes_via_article", false, x.note1, x.note2)
				},
			}.after(),
		},
		{
			Name: "unknown keys are ignored", URL: list + "nope,title,author,notes_via_nope,nope_via_article,author.nope", ExpectedStatus: http.StatusOK,
			AfterFunc: expandCheck{
				x.art1: func(t testing.TB, e map[string]any) {
					one(t, e, "author", x.ann)
					absent("nope", "title", "notes_via_nope", "nope_via_article")(t, e)
				},
			}.after(),
		},
		{
			Name: "a null view rule: not expanded for anonymous callers", URL: list + "secret,author", ExpectedStatus: http.StatusOK,
			NotExpectedContent: []string{`"secrets"`},
			AfterFunc:          expandCheck{x.art1: absent("secret")}.after(),
		},
		{
			Name: "admins expand it", URL: list + "secret", Admin: true, ExpectedStatus: http.StatusOK,
			AfterFunc: expandCheck{x.art1: func(t testing.TB, e map[string]any) { one(t, e, "secret", x.secret) }}.after(),
		},
		{
			Name: "an expression view rule filters what is expanded", URL: list + "guard,guards", ExpectedStatus: http.StatusOK,
			NotExpectedContent: []string{`"unseen"`},
			AfterFunc: expandCheck{
				x.art1: func(t testing.TB, e map[string]any) {
					absent("guard")(t, e)
					many(t, e, "guards", true, x.seen)
				},
				x.art2: func(t testing.TB, e map[string]any) { one(t, e, "guard", x.seen) },
			}.after(),
		},
		{
			Name: "admins see every guarded record", URL: list + "guard,guards", Admin: true, ExpectedStatus: http.StatusOK,
			AfterFunc: expandCheck{
				x.art1: func(t testing.TB, e map[string]any) {
					one(t, e, "guard", x.unseen)
					many(t, e, "guards", true, x.unseen, x.seen)
				},
			}.after(),
		},
		{
			Name: "a single GET expands", URL: get(x.art1, "author.company,labels,notes_via_article"), ExpectedStatus: http.StatusOK,
			AfterFunc: expandCheck{
				x.art1: func(t testing.TB, e map[string]any) {
					one(t, apitest.Obj(t, one(t, e, "author", x.ann)["expand"]), "company", x.acme)
					many(t, e, "labels", true, x.blue, x.red)
					many(t, e, "notes_via_article", false, x.note1, x.note2)
				},
			}.after(),
		},
		{
			Name: "a single GET applies the view rules of expanded records", URL: get(x.art1, "secret,guard,guards"), ExpectedStatus: http.StatusOK,
			AfterFunc: expandCheck{
				x.art1: func(t testing.TB, e map[string]any) {
					absent("secret", "guard")(t, e)
					many(t, e, "guards", true, x.seen)
				},
			}.after(),
		},
		{
			Name: "a single GET without expand has no expand member", URL: "/api/v1/articles/" + x.art1, ExpectedStatus: http.StatusOK,
			NotExpectedContent: []string{`"expand"`},
		},
		{
			Name: "fields projects the record and keeps the expansion", URL: "/api/v1/articles?sort=title&fields=title,expand&expand=author",
			ExpectedStatus:     http.StatusOK,
			NotExpectedContent: []string{`"labels"`, `"collectionName":"articles"`},
			AfterFunc: func(t testing.TB, s *apitest.Server, body []byte) {
				for _, r := range apitest.List(t, apitest.DecodeMap(t, body)["data"]) {
					rec := apitest.Obj(t, r)
					for k := range rec {
						if k != "id" && k != "title" && k != "expand" {
							t.Errorf("projected record has %q: %v", k, rec)
						}
					}
				}
				one(t, expandOf(t, body, x.art1), "author", x.ann)
			},
		},
		{
			Name: "fields on a single GET with expand", URL: get(x.art2, "author") + "&fields=title,expand",
			ExpectedStatus: http.StatusOK, ExpectedContent: []string{`"title":"two"`},
			AfterFunc: func(t testing.TB, s *apitest.Server, body []byte) {
				rec := apitest.Obj(t, apitest.DecodeMap(t, body)["data"])
				if len(rec) != 3 {
					t.Errorf("want id, title and expand: %v", rec)
				}
				one(t, expandOf(t, body, x.art2), "author", x.bob)
			},
		},
		{
			Name: "expand composes with a filter through the same relation", URL: "/api/v1/articles?expand=author&filter=" + url.QueryEscape("author.company.name = 'acme'"),
			ExpectedStatus: http.StatusOK,
			AfterFunc: func(t testing.TB, s *apitest.Server, body []byte) {
				wantIDs(x.art1)(t, s, body)
				one(t, expandOf(t, body, x.art1), "author", x.ann)
			},
		},
		{
			Name: "a deep or cyclic expand is bounded", URL: list + "author.articles_via_author.author.articles_via_author.author.articles_via_author.author.articles_via_author",
			ExpectedStatus: http.StatusOK,
		},
	})
}

// TestExpandHiddenRelations: a hidden relation field is not shown to
// non-admins, so expanding it (forward, or backward through it) must not
// reveal what it points at.
func TestExpandHiddenRelations(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	x := seedArticles(t, s)

	apitest.Scenario{
		Name: "admins expand a hidden relation", URL: "/api/v1/articles/" + x.art1 + "?expand=hidden_author", Admin: true,
		ExpectedStatus: http.StatusOK,
		AfterFunc:      expandCheck{x.art1: func(t testing.TB, e map[string]any) { one(t, e, "hidden_author", x.bob) }}.after(),
	}.Test(t, s)

	t.Run("forward", func(t *testing.T) {
		apitest.Scenario{
			URL: "/api/v1/articles/" + x.art1 + "?expand=hidden_author", ExpectedStatus: http.StatusOK,
			AfterFunc: expandCheck{x.art1: absent("hidden_author")}.after(),
		}.Test(t, s)
	})
	t.Run("backward", func(t *testing.T) {
		apitest.Scenario{
			URL: "/api/v1/articles/" + x.art1 + "?expand=hnotes_via_article", ExpectedStatus: http.StatusOK,
			AfterFunc: expandCheck{x.art1: func(t testing.TB, e map[string]any) {
				if v, ok := e["hnotes_via_article"]; ok && len(apitest.List(t, v)) > 0 {
					t.Errorf("hnotes_via_article expanded: %v", v)
				}
			}}.after(),
		}.Test(t, s)
	})
}
