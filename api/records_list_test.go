package api_test

import (
	"fmt"
	"net/http"
	"reflect"
	"testing"

	"svcd/api/apitest"
)

// seedItems creates items whose ids sort in creation order ("item...01" to
// "item...07") and whose n values are not in that order.
func seedItems(t testing.TB, s *apitest.Server) []string {
	t.Helper()
	s.CreateCollection(t, coll("items", "base", []map[string]any{
		f("n", "number"), f("label", "text"), f("secret", "text", "hidden", true),
	}, "view_rule", ""))
	var ids []string
	for i, n := range []int{5, 3, 7, 1, 6, 2, 4} {
		id := fmt.Sprintf("item%011d", i+1)
		s.CreateRecord(t, "items", map[string]any{"id": id, "n": n, "label": fmt.Sprintf("l%d", n), "secret": fmt.Sprintf("s%d", 8-n)})
		ids = append(ids, id)
	}
	return ids
}

// pick returns ids[idx[0]], ids[idx[1]], ...
func pick(ids []string, idx ...int) []string {
	out := make([]string, len(idx))
	for i, j := range idx {
		out[i] = ids[j]
	}
	return out
}

func TestRecordList(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	ids := seedItems(t, s)
	newestFirst := pick(ids, 6, 5, 4, 3, 2, 1, 0)
	byNAsc := pick(ids, 3, 5, 1, 6, 0, 4, 2) // n = 1..7
	byNDesc := pick(ids, 2, 4, 0, 6, 1, 5, 3)

	order := func(want []string) func(t testing.TB, s *apitest.Server, body []byte) {
		return func(t testing.TB, s *apitest.Server, body []byte) {
			t.Helper()
			var got []string
			for _, r := range apitest.List(t, apitest.DecodeMap(t, body)["data"]) {
				got = append(got, apitest.Obj(t, r)["id"].(string))
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("order\n got %v\nwant %v", got, want)
			}
		}
	}

	apitest.Run(t, s, []apitest.Scenario{
		{
			Name:            "defaults: page 1, perPage 30, newest first",
			URL:             "/api/v1/items",
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"page":1`, `"perPage":30`, `"totalItems":7`, `"totalPages":1`},
			AfterFunc:       order(newestFirst),
		},
		{
			Name:            "page and perPage",
			URL:             "/api/v1/items?perPage=3&page=2",
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"page":2`, `"perPage":3`, `"totalItems":7`, `"totalPages":3`},
			AfterFunc:       order(newestFirst[3:6]),
		},
		{
			Name:            "the last page is partial",
			URL:             "/api/v1/items?perPage=3&page=3",
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"page":3`, `"totalPages":3`},
			AfterFunc:       order(newestFirst[6:]),
		},
		{
			Name:            "a page past the end is empty",
			URL:             "/api/v1/items?perPage=3&page=9",
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"data":[]`, `"page":9`, `"totalItems":7`},
		},
		{
			Name:            "page below 1 is page 1",
			URL:             "/api/v1/items?page=0&perPage=2",
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"page":1`, `"totalPages":4`},
			AfterFunc:       order(newestFirst[:2]),
		},
		{
			Name:            "a non-numeric page or perPage takes the default",
			URL:             "/api/v1/items?page=x&perPage=y",
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"page":1`, `"perPage":30`},
		},
		{
			Name:            "perPage 0 takes the default",
			URL:             "/api/v1/items?perPage=0",
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"perPage":30`},
		},
		{
			Name:            "perPage is capped at 500",
			URL:             "/api/v1/items?perPage=100000",
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"perPage":500`, `"totalPages":1`},
		},
		{
			Name:           "sort by a field ascending",
			URL:            "/api/v1/items?sort=n",
			ExpectedStatus: http.StatusOK,
			AfterFunc:      order(byNAsc),
		},
		{
			Name:           "sort by a field ascending with +",
			URL:            "/api/v1/items?sort=%2Bn",
			ExpectedStatus: http.StatusOK,
			AfterFunc:      order(byNAsc),
		},
		{
			Name:           "sort by a field descending",
			URL:            "/api/v1/items?sort=-n",
			ExpectedStatus: http.StatusOK,
			AfterFunc:      order(byNDesc),
		},
		{
			Name:           "sort by created ascending",
			URL:            "/api/v1/items?sort=created",
			ExpectedStatus: http.StatusOK,
			AfterFunc:      order(ids),
		},
		{
			Name:           "sort by id descending",
			URL:            "/api/v1/items?sort=-id",
			ExpectedStatus: http.StatusOK,
			AfterFunc:      order(newestFirst),
		},
		{
			Name:           "an unknown column is skipped, the rest applies",
			URL:            "/api/v1/items?sort=nope,-n",
			ExpectedStatus: http.StatusOK,
			AfterFunc:      order(byNDesc),
		},
		{
			Name:           "a private or hidden column does not sort for anonymous callers",
			URL:            "/api/v1/items?sort=secret,n",
			ExpectedStatus: http.StatusOK,
			AfterFunc:      order(byNAsc),
		},
		{
			Name:           "admins may sort by a hidden column",
			URL:            "/api/v1/items?sort=secret",
			Admin:          true,
			ExpectedStatus: http.StatusOK,
			AfterFunc:      order(byNDesc), // secret = s(8-n)
		},
		{
			Name:               "fields projects and keeps id",
			URL:                "/api/v1/items?fields=n&perPage=1&sort=n",
			ExpectedStatus:     http.StatusOK,
			ExpectedContent:    []string{`"data":[{"id":"` + byNAsc[0] + `","n":1}]`},
			NotExpectedContent: []string{`"label"`, `"created"`, `"collectionName"`},
		},
		{
			Name:               "fields may name system fields",
			URL:                "/api/v1/items?fields=%20collectionName%20,label&perPage=1&sort=n",
			ExpectedStatus:     http.StatusOK,
			ExpectedContent:    []string{`{"id":"` + byNAsc[0] + `","collectionName":"items","label":"l1"}`},
			NotExpectedContent: []string{`"collectionId"`},
		},
		{
			Name:            "fields with only unknown names leaves id",
			URL:             "/api/v1/items?fields=nope&perPage=1&sort=n",
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"data":[{"id":"` + byNAsc[0] + `"}]`},
		},
		{
			Name:               "fields cannot reveal a hidden field to anonymous callers",
			URL:                "/api/v1/items?fields=secret",
			ExpectedStatus:     http.StatusOK,
			NotExpectedContent: []string{`"secret"`},
		},
		{
			Name:            "skipTotal=1 gives -1 totals",
			URL:             "/api/v1/items?skipTotal=1&perPage=2",
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"totalItems":-1`, `"totalPages":-1`, `"perPage":2`},
			AfterFunc:       order(newestFirst[:2]),
		},
		{
			Name:            "skipTotal=true too",
			URL:             "/api/v1/items?skipTotal=true",
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"totalItems":-1`, `"totalPages":-1`},
		},
		{
			Name:            "skipTotal=0 counts",
			URL:             "/api/v1/items?skipTotal=0",
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"totalItems":7`},
		},
		{
			Name:               "hidden fields are not listed for anonymous callers",
			URL:                "/api/v1/items",
			ExpectedStatus:     http.StatusOK,
			NotExpectedContent: []string{`"secret"`},
		},
		{
			Name:            "hidden fields are listed for admins",
			URL:             "/api/v1/items",
			Admin:           true,
			ExpectedStatus:  http.StatusOK,
			ExpectedContent: []string{`"secret":"s1"`},
		},
	})

	// filter, expand and cursor are implemented (filter_test.go,
	// expand_test.go, cursor_test.go cover them in depth); here: they
	// answer 200 on this collection and compose with the rest.
	var implemented []apitest.Scenario
	for _, admin := range []bool{false, true} {
		who := fmt.Sprintf(" (admin %v)", admin)
		implemented = append(implemented,
			apitest.Scenario{
				Name:            "filter applies" + who,
				URL:             "/api/v1/items?filter=n%3E1&sort=n",
				Admin:           admin,
				ExpectedStatus:  http.StatusOK,
				ExpectedContent: []string{`"totalItems":6`},
				AfterFunc:       order(byNAsc[1:]),
			},
			apitest.Scenario{
				Name:            "an empty filter is no filter" + who,
				URL:             "/api/v1/items?filter=",
				Admin:           admin,
				ExpectedStatus:  http.StatusOK,
				ExpectedContent: []string{`"totalItems":7`},
				AfterFunc:       order(newestFirst),
			},
			apitest.Scenario{
				Name:               "expand of an unknown key is ignored" + who,
				URL:                "/api/v1/items?expand=owner",
				Admin:              admin,
				ExpectedStatus:     http.StatusOK,
				ExpectedContent:    []string{`"totalItems":7`},
				NotExpectedContent: []string{`"expand"`},
				AfterFunc:          order(newestFirst),
			},
			apitest.Scenario{
				Name:            "a malformed cursor is 400" + who,
				URL:             "/api/v1/items?cursor=abc",
				Admin:           admin,
				ExpectedStatus:  http.StatusBadRequest,
				ExpectedContent: []string{"Malformed cursor"},
			},
			apitest.Scenario{
				Name:            "an empty cursor is the first page of a keyset walk" + who,
				URL:             "/api/v1/items?cursor=",
				Admin:           admin,
				ExpectedStatus:  http.StatusOK,
				ExpectedContent: []string{`"nextCursor":null`, `"page":1`},
				AfterFunc:       order(newestFirst),
			},
		)
	}
	t.Run("implemented", func(t *testing.T) { apitest.Run(t, s, implemented) })

	// search and vector search are answered (api/search_test.go and
	// api/vector_test.go cover them): items has no searchable field and
	// no vector field.
	t.Run("search and nearVector", func(t *testing.T) {
		apitest.Run(t, s, []apitest.Scenario{
			{Name: "search without searchable fields is empty", URL: "/api/v1/items?search=l5", Admin: true,
				ExpectedStatus: http.StatusOK, ExpectedContent: []string{`"data":[]`, `"totalItems":0`}},
			{Name: "nearVector without a vector field is 422", URL: "/api/v1/items?nearVector=%5B1,2%5D", Admin: true,
				ExpectedStatus: http.StatusUnprocessableEntity, ExpectedContent: []string{`"nearVectorField"`}},
		})
	})
}

// TestRecordListUnknownSortOnly: SPEC.md "only known columns accepted,
// unknown ignored; default -created". A sort made only of unknown columns
// must fall back to the default order, as if no sort had been given.
func TestRecordListUnknownSortOnly(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	ids := seedItems(t, s)
	want := listIDs(t, s, "/api/v1/items")
	if !reflect.DeepEqual(want, pick(ids, 6, 5, 4, 3, 2, 1, 0)) {
		t.Fatalf("default order %v", want)
	}
	for _, q := range []string{"nope", "-nope", "password", ","} {
		if got := listIDs(t, s, "/api/v1/items?sort="+q); !reflect.DeepEqual(got, want) {
			t.Errorf("sort=%s: got %v, want the default order %v", q, got, want)
		}
	}
}

// TestRecordListHugePage: a page number whose offset overflows must not
// wrap around to the first page.
func TestRecordListHugePage(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	seedItems(t, s)
	apitest.Scenario{
		URL:             "/api/v1/items?perPage=2&page=4611686018427387905",
		ExpectedStatus:  http.StatusOK,
		ExpectedContent: []string{`"data":[]`},
	}.Test(t, s)
}
