package api_test

import (
	"net/http"
	"net/url"
	"reflect"
	"sort"
	"strings"
	"testing"

	"svcd/api/apitest"
)

// anonIDs lists path as an anonymous caller and returns the ids in order.
func anonIDs(t testing.TB, s *apitest.Server, path string) []string {
	t.Helper()
	res, body := s.Do(t, http.MethodGet, path, nil, nil)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, res.StatusCode, body)
	}
	var ids []string
	for _, r := range apitest.List(t, apitest.DecodeMap(t, body)["data"]) {
		ids = append(ids, apitest.Obj(t, r)["id"].(string))
	}
	return ids
}

func searchGot(t testing.TB, what string, got []string, want ...string) {
	t.Helper()
	g := append([]string(nil), got...)
	w := append([]string(nil), want...)
	sort.Strings(g)
	sort.Strings(w)
	if len(g) == 0 && len(w) == 0 {
		return
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s: got %v, want %v", what, got, want)
	}
}

func searchURL(coll, q string, extra ...string) string {
	u := "/api/v1/" + coll + "?search=" + url.QueryEscape(q)
	for _, e := range extra {
		u += "&" + e
	}
	return u
}

// seedDocs creates "articles": title and body searchable, note searchable but
// hidden, tag not searchable; anonymous callers see pub records only.
func seedDocs(t *testing.T, s *apitest.Server) map[string]string {
	t.Helper()
	s.CreateCollection(t, coll("articles", "base", []map[string]any{
		f("title", "text", "searchable", true),
		f("body", "editor", "searchable", true),
		f("note", "text", "searchable", true, "hidden", true),
		f("tag", "text"),
		f("n", "number"),
		f("pub", "bool"),
	}, "view_rule", "pub = true"))
	ids := map[string]string{}
	for _, d := range []struct {
		key, title, body, note, tag string
		n                           int
		pub                         bool
	}{
		{"cafe", "Café crème", "<p>un <b>déjà</b> vu</p>", "", "alpha", 1, true},
		{"quote", `He said "AND" OR NOT`, "<p>near(x y)</p>", "", "beta", 2, true},
		{"apple", "apple pie", "with cinnamon", "secretword", "gamma", 3, true},
		{"apple2", "apple tart", "no cinnamon", "", "delta", 4, false},
		{"apple3", "green apple", "crisp", "", "eps", 5, true},
		{"tagonly", "nothing here", "plain", "", "cinnamon", 6, true},
	} {
		rec := s.CreateRecord(t, "articles", map[string]any{"title": d.title, "body": d.body, "note": d.note, "tag": d.tag, "n": d.n, "pub": d.pub})
		ids[d.key] = rec["id"].(string)
	}
	return ids
}

func TestSearchTerms(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	ids := seedDocs(t, s)

	t.Run("accent-insensitive both ways", func(t *testing.T) {
		searchGot(t, "cafe", listIDs(t, s, searchURL("articles", "cafe creme")), ids["cafe"])
		searchGot(t, "déjà", listIDs(t, s, searchURL("articles", "DEJA")), ids["cafe"])
		searchGot(t, "Crème", listIDs(t, s, searchURL("articles", "Crème")), ids["cafe"])
	})
	t.Run("terms are AND-ed across fields", func(t *testing.T) {
		searchGot(t, "apple", listIDs(t, s, searchURL("articles", "apple")), ids["apple"], ids["apple2"], ids["apple3"])
		searchGot(t, "apple cinnamon", listIDs(t, s, searchURL("articles", "apple cinnamon")), ids["apple"], ids["apple2"])
		searchGot(t, "apple cinnamon crisp", listIDs(t, s, searchURL("articles", "apple cinnamon crisp")))
	})
	t.Run("editor markup is not indexed", func(t *testing.T) {
		searchGot(t, "b", listIDs(t, s, searchURL("articles", "b")))
		searchGot(t, "p", listIDs(t, s, searchURL("articles", "p")))
	})
	t.Run("non-searchable fields are not matched", func(t *testing.T) {
		searchGot(t, "gamma", listIDs(t, s, searchURL("articles", "gamma")))
	})
	t.Run("quotes and FTS operators are literal", func(t *testing.T) {
		for _, q := range []string{`"AND"`, `AND`, `OR`, `NOT`, `said "AND" OR NOT`, `near(x`, `NEAR(x y)`, `"AND`, `he*`} {
			got := listIDs(t, s, searchURL("articles", q))
			if q == `he*` {
				searchGot(t, q, got, ids["quote"]) // "he" token; * is not a prefix query
				continue
			}
			searchGot(t, q, got, ids["quote"])
		}
		for _, q := range []string{`title:apple`, `{title}: apple`, `apple -cinnamon`, `ap*`, `^apple`} {
			res, body := s.AdminDo(t, http.MethodGet, searchURL("articles", q), nil)
			if res.StatusCode != http.StatusOK {
				t.Errorf("%q: %d %s", q, res.StatusCode, body)
			}
		}
		// "ap*" is the token "ap": no prefix matching.
		searchGot(t, "ap*", listIDs(t, s, searchURL("articles", "ap*")))
		// "-cinnamon" is the token "cinnamon", not a negation.
		searchGot(t, "apple -cinnamon", listIDs(t, s, searchURL("articles", "apple -cinnamon")), ids["apple"], ids["apple2"])
	})
	t.Run("control characters separate terms", func(t *testing.T) {
		searchGot(t, "NUL", listIDs(t, s, searchURL("articles", "apple\x00pie")), ids["apple"])
	})
	t.Run("punctuation-only and empty", func(t *testing.T) {
		searchGot(t, "!!!", listIDs(t, s, searchURL("articles", "!!! ---")))
		if got := listIDs(t, s, searchURL("articles", "   ")); len(got) != 6 {
			t.Errorf("blank search filters nothing: got %d records, want 6", len(got))
		}
	})
	t.Run("33 terms: the first 32 are used", func(t *testing.T) {
		fill := strings.Repeat("apple ", 31) // 31 terms
		searchGot(t, "32 terms", listIDs(t, s, searchURL("articles", fill+"cinnamon")), ids["apple"], ids["apple2"])
		// The 33rd term would match nothing; it is ignored.
		searchGot(t, "33 terms", listIDs(t, s, searchURL("articles", fill+"cinnamon zzznomatch")), ids["apple"], ids["apple2"])
		searchGot(t, "32nd term matters", listIDs(t, s, searchURL("articles", fill+"zzznomatch")))
	})
	t.Run("hidden searchable fields match for admins only", func(t *testing.T) {
		searchGot(t, "admin", listIDs(t, s, searchURL("articles", "secretword")), ids["apple"])
		searchGot(t, "anonymous", anonIDs(t, s, searchURL("articles", "secretword")))
		searchGot(t, "anonymous other terms", anonIDs(t, s, searchURL("articles", "apple pie")), ids["apple"])
	})
}

func TestSearchComposes(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	ids := seedDocs(t, s)
	apple := []string{ids["apple"], ids["apple2"], ids["apple3"]}

	t.Run("rules: a record the caller cannot view is never found", func(t *testing.T) {
		searchGot(t, "anonymous apple", anonIDs(t, s, searchURL("articles", "apple")), ids["apple"], ids["apple3"])
		searchGot(t, "anonymous tart", anonIDs(t, s, searchURL("articles", "tart")))
	})
	t.Run("filter", func(t *testing.T) {
		searchGot(t, "apple n>=4", listIDs(t, s, searchURL("articles", "apple", "filter="+url.QueryEscape("n >= 4"))), ids["apple2"], ids["apple3"])
	})
	t.Run("sort, totals and paging", func(t *testing.T) {
		got := listIDs(t, s, searchURL("articles", "apple", "sort=-n"))
		if want := []string{apple[2], apple[1], apple[0]}; !reflect.DeepEqual(got, want) {
			t.Errorf("sort=-n: got %v, want %v", got, want)
		}
		out := s.MustAdmin(t, http.StatusOK, http.MethodGet, searchURL("articles", "apple", "sort=n", "perPage=2", "page=2"), nil)
		if apitest.Int(t, out["totalItems"]) != 3 || apitest.Int(t, out["totalPages"]) != 2 {
			t.Errorf("totals: %v", out)
		}
		page2 := apitest.List(t, out["data"])
		if len(page2) != 1 || apitest.Obj(t, page2[0])["id"] != apple[2] {
			t.Errorf("page 2: %v", page2)
		}
	})
	t.Run("cursor", func(t *testing.T) {
		out := s.MustAdmin(t, http.StatusOK, http.MethodGet, searchURL("articles", "apple", "sort=n", "perPage=2", "cursor="), nil)
		cur, _ := out["nextCursor"].(string)
		if len(apitest.List(t, out["data"])) != 2 || cur == "" {
			t.Fatalf("first page: %v", out)
		}
		got := listIDs(t, s, searchURL("articles", "apple", "sort=n", "perPage=2", "cursor="+cur))
		if !reflect.DeepEqual(got, []string{apple[2]}) {
			t.Errorf("second page: got %v", got)
		}
	})
}

func TestSearchIndexFollowsWrites(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	ids := seedDocs(t, s)

	t.Run("update", func(t *testing.T) {
		s.MustAdmin(t, http.StatusOK, http.MethodPatch, "/api/v1/articles/"+ids["tagonly"], map[string]any{"title": "Zebra café"})
		searchGot(t, "zebra", listIDs(t, s, searchURL("articles", "zebra cafe")), ids["tagonly"])
		searchGot(t, "old text gone", listIDs(t, s, searchURL("articles", "nothing")))
		// An update of a field outside the index keeps the record found.
		s.MustAdmin(t, http.StatusOK, http.MethodPatch, "/api/v1/articles/"+ids["tagonly"], map[string]any{"n": 60})
		searchGot(t, "still zebra", listIDs(t, s, searchURL("articles", "zebra")), ids["tagonly"])
	})
	t.Run("delete", func(t *testing.T) {
		s.MustAdmin(t, http.StatusNoContent, http.MethodDelete, "/api/v1/articles/"+ids["apple3"], nil)
		searchGot(t, "apple", listIDs(t, s, searchURL("articles", "apple")), ids["apple"], ids["apple2"])
	})
	t.Run("schema change: a field becomes searchable, another stops", func(t *testing.T) {
		c := apitest.Obj(t, s.MustAdmin(t, http.StatusOK, http.MethodGet, collectionsURL+"/articles", nil)["data"])
		byName := map[string]map[string]any{}
		for _, fl := range apitest.List(t, c["fields"]) {
			m := apitest.Obj(t, fl)
			byName[m["name"].(string)] = m
		}
		byName["tag"]["searchable"] = true
		byName["title"]["searchable"] = false
		var fields []map[string]any
		for _, n := range []string{"title", "body", "note", "tag", "n", "pub"} {
			fields = append(fields, byName[n])
		}
		s.MustAdmin(t, http.StatusOK, http.MethodPatch, collectionsURL+"/articles", map[string]any{"fields": fields})
		searchGot(t, "tag now indexed", listIDs(t, s, searchURL("articles", "cinnamon")), ids["apple"], ids["apple2"], ids["tagonly"])
		searchGot(t, "title no longer", listIDs(t, s, searchURL("articles", "zebra")))
		// Writes after the rebuild keep the new index in step.
		rec := s.CreateRecord(t, "articles", map[string]any{"title": "ignored", "tag": "Ünïcode"})
		searchGot(t, "new record", listIDs(t, s, searchURL("articles", "unicode")), rec["id"].(string))
		// Renaming the collection keeps its index.
		s.MustAdmin(t, http.StatusOK, http.MethodPatch, collectionsURL+"/articles", map[string]any{"name": "papers"})
		searchGot(t, "renamed", listIDs(t, s, searchURL("papers", "unicode")), rec["id"].(string))
	})
	t.Run("no searchable field left: empty result", func(t *testing.T) {
		c := apitest.Obj(t, s.MustAdmin(t, http.StatusOK, http.MethodGet, collectionsURL+"/papers", nil)["data"])
		var fields []map[string]any
		for _, fl := range apitest.List(t, c["fields"]) {
			m := apitest.Obj(t, fl)
			m["searchable"] = false
			fields = append(fields, m)
		}
		s.MustAdmin(t, http.StatusOK, http.MethodPatch, collectionsURL+"/papers", map[string]any{"fields": fields})
		out := s.MustAdmin(t, http.StatusOK, http.MethodGet, searchURL("papers", "unicode"), nil)
		if len(apitest.List(t, out["data"])) != 0 || apitest.Int(t, out["totalItems"]) != 0 {
			t.Errorf("want an empty result: %v", out)
		}
		// Deleting the collection drops the index with it; a new one of
		// the same name starts empty.
		s.MustAdmin(t, http.StatusNoContent, http.MethodDelete, collectionsURL+"/papers", nil)
		s.CreateCollection(t, coll("papers", "base", []map[string]any{f("title", "text", "searchable", true)}))
		searchGot(t, "fresh", listIDs(t, s, searchURL("papers", "unicode")))
	})
}

// TestSearchCSVImport: records imported from CSV are indexed like any
// create; a row that fails (a unique clash, under its own savepoint)
// leaves nothing in the index.
func TestSearchCSVImport(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, coll("imported", "base", []map[string]any{
		f("title", "text", "searchable", true), f("code", "text", "unique", true)}, "view_rule", ""))
	s.CreateRecord(t, "imported", map[string]any{"title": "existing", "code": "c1"})
	data := importOK(t, s, "imported", "title,code\nZürich harbour,c2\nzurich lake,c3\nclash zurich,c1\n")
	if apitest.Int(t, data["failed"]) != 1 || apitest.Int(t, data["created"]) != 2 {
		t.Fatalf("want the clashing row to fail: %v", data)
	}
	got := listIDs(t, s, searchURL("imported", "zurich"))
	if len(got) != 2 {
		t.Errorf("zurich: %d records, want the 2 imported", len(got))
	}
	searchGot(t, "clash", listIDs(t, s, searchURL("imported", "clash")))
}

func TestSearchWithoutSearchableFields(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{EncryptionKey: testEncKey})
	s.CreateCollection(t, coll("plain", "base", []map[string]any{f("title", "text")}, "view_rule", ""))
	s.CreateRecord(t, "plain", map[string]any{"title": "hello"})
	s.CreateCollection(t, coll("mixed", "base", []map[string]any{f("title", "text", "searchable", true), f("secret", "text", "encrypted", true)}, "view_rule", ""))
	s.CreateRecord(t, "mixed", map[string]any{"title": "visible words", "secret": "hush"})
	apitest.Run(t, s, []apitest.Scenario{
		{
			Name:            "an encrypted field is never indexed",
			URL:             searchURL("mixed", "hush"),
			Admin:           true,
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"data":[]`, `"totalItems":0`},
		},
		{
			Name:            "its searchable neighbour is",
			URL:             searchURL("mixed", "visible"),
			Admin:           true,
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"totalItems":1`, `"secret":"hush"`},
		},
		{
			Name:            "any search is an empty result",
			URL:             searchURL("plain", "hello"),
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"data":[]`, `"totalItems":0`},
		},
		{
			Name:            "an encrypted field cannot be searchable",
			Method:          http.MethodPost,
			URL:             collectionsURL,
			Admin:           true,
			Body:            coll("sealed", "base", []map[string]any{f("s", "text", "encrypted", true, "searchable", true)}),
			ExpectedStatus:  http.StatusUnprocessableEntity,
			ExpectedContent: []string{"searchable and encrypted cannot both be set"},
		},
		{
			Name:           "search in a batch list is 400",
			Method:         http.MethodPost,
			URL:            "/api/v1/batch",
			Admin:          true,
			Body:           map[string]any{"requests": []map[string]any{{"method": "GET", "url": "/api/v1/plain?search=hello"}}},
			ExpectedStatus: http.StatusBadRequest,
		},
	})
}
