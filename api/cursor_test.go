package api_test

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"testing"

	"svcd/api/apitest"
)

// Keyset pagination (SPEC.md "Keyset pagination", docs/filters.md "Keyset
// pages"): follow nextCursor until null; one sort column plus id; no
// duplicates, no gaps, stable under concurrent inserts; 400 for a malformed
// cursor or a multi-column sort.

const walkSize = 95

// seedWalk creates a collection of walkSize records with random ids,
// repeated titles and repeated numbers with NULLs among them.
func seedWalk(t testing.TB, s *apitest.Server, name, viewRule string) {
	t.Helper()
	s.CreateCollection(t, coll(name, "base", []map[string]any{f("title", "text"), f("n", "number")}, "view_rule", viewRule))
	for i := range walkSize {
		s.CreateRecord(t, name, walkRecord(i))
	}
}

// walkRecord is the i-th record of a walk collection: titles t00..t39 and
// n 0..8 repeat, and every sixth n is NULL.
func walkRecord(i int) map[string]any {
	rec := map[string]any{"title": fmt.Sprintf("t%02d", (i*37)%40)}
	if i%6 != 0 {
		rec["n"] = (i * 13) % 9
	}
	return rec
}

// page is one answer of a list.
type page struct {
	ids        []string
	nextCursor any // nil or a string
	hasCursor  bool
	body       []byte
}

func getPage(t testing.TB, s *apitest.Server, path string, headers map[string]string) page {
	t.Helper()
	res, body := s.Do(t, http.MethodGet, path, nil, headers)
	apitest.CheckCommon(t, res, body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, res.StatusCode, body)
	}
	m := apitest.DecodeMap(t, body)
	next, has := m["nextCursor"]
	return page{ids: dataIDs(t, body), nextCursor: next, hasCursor: has, body: body}
}

// walk follows nextCursor from the first page of coll with query (sort,
// filter...), calling between(pageNumber) after each page, and returns the
// ids in walk order and the page sizes.
func walk(t testing.TB, s *apitest.Server, coll, query string, perPage int, headers map[string]string, between func(int)) (ids []string, sizes []int) {
	t.Helper()
	cursor := ""
	for n := 0; ; n++ {
		if n > 1000 {
			t.Fatalf("walk of %s?%s does not end", coll, query)
		}
		p := getPage(t, s, fmt.Sprintf("/api/v1/%s?perPage=%d&%s&cursor=%s", coll, perPage, query, url.QueryEscape(cursor)), headers)
		if !p.hasCursor {
			t.Fatalf("cursor mode answer without nextCursor: %s", p.body)
		}
		ids = append(ids, p.ids...)
		sizes = append(sizes, len(p.ids))
		if between != nil {
			between(n)
		}
		if p.nextCursor == nil {
			return ids, sizes
		}
		next, ok := p.nextCursor.(string)
		if !ok || next == "" {
			t.Fatalf("nextCursor is %T %v", p.nextCursor, p.nextCursor)
		}
		cursor = next
	}
}

// duplicates returns the ids seen more than once.
func duplicates(ids []string) []string {
	seen := map[string]int{}
	var out []string
	for _, id := range ids {
		if seen[id]++; seen[id] == 2 {
			out = append(out, id)
		}
	}
	return out
}

func TestCursorWalks(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	seedWalk(t, s, "walk", "")
	for _, sort := range []string{"", "-created", "created", "title", "-title", "%2Btitle", "n", "-n", "id", "-id", "updated", "nope,title"} {
		t.Run("sort="+sort, func(t *testing.T) {
			q := "sort=" + sort
			full := getPage(t, s, "/api/v1/walk?perPage=500&"+q, nil).ids // offset order
			if len(full) != walkSize {
				t.Fatalf("%d records, want %d", len(full), walkSize)
			}
			got, sizes := walk(t, s, "walk", q, 10, nil, nil)
			if d := duplicates(got); len(d) > 0 {
				t.Errorf("duplicates: %v", d)
			}
			if !slices.Equal(got, full) {
				t.Errorf("the walk differs from the list order (gaps or reordering):\n walk %v\n list %v", got, full)
			}
			wantSizes := []int{10, 10, 10, 10, 10, 10, 10, 10, 10, 5}
			if fmt.Sprint(sizes) != fmt.Sprint(wantSizes) {
				t.Errorf("page sizes %v, want %v", sizes, wantSizes)
			}
		})
	}
	t.Run("a collection that fits one page", func(t *testing.T) {
		p := getPage(t, s, "/api/v1/walk?perPage=500&cursor=", nil)
		if len(p.ids) != walkSize || p.nextCursor != nil {
			t.Errorf("%d records, nextCursor %v", len(p.ids), p.nextCursor)
		}
	})
	t.Run("perPage equal to the size ends with null, not an empty page", func(t *testing.T) {
		ids, sizes := walk(t, s, "walk", "sort=title", walkSize, nil, nil)
		if len(ids) != walkSize || len(sizes) != 1 {
			t.Errorf("sizes %v", sizes)
		}
	})
}

func TestCursorUnderConcurrentInserts(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	seedWalk(t, s, "stream", "")
	before := getPage(t, s, "/api/v1/stream?perPage=500", nil).ids
	inserted := 0

	for _, sort := range []string{"title", "-title", "n", "-n", "-created", "created"} {
		t.Run("inserts between pages, sort="+sort, func(t *testing.T) {
			existing := getPage(t, s, "/api/v1/stream?perPage=500", nil).ids
			// After each page, three records land all over the order.
			got, _ := walk(t, s, "stream", "sort="+sort, 7, nil, func(int) {
				for range 3 {
					s.CreateRecord(t, "stream", walkRecord(inserted))
					inserted++
				}
			})
			checkWalk(t, got, existing)
		})
	}

	t.Run("a concurrent writer", func(t *testing.T) {
		existing := getPage(t, s, "/api/v1/stream?perPage=500", nil).ids
		admin := s.AdminHeaders(t, nil)
		stop, started := make(chan struct{}), make(chan struct{})
		var wg sync.WaitGroup
		var errs []error
		writes := 0
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if writes == 0 {
					close(started)
				}
			}()
			for i := range 150 { // bounded: the walk must outrun the writer eventually
				select {
				case <-stop:
					return
				default:
				}
				res, body, err := s.Send(http.MethodPost, "/api/v1/stream", walkRecord(1000+i), admin)
				if err == nil && res.StatusCode != http.StatusCreated {
					err = fmt.Errorf("create: %d %s", res.StatusCode, body)
				}
				if err != nil {
					errs = append(errs, err)
					return
				}
				if writes++; writes == 1 {
					close(started)
				}
			}
		}()
		<-started
		got, _ := walk(t, s, "stream", "sort=title", 3, nil, nil)
		close(stop)
		wg.Wait()
		for _, err := range errs {
			t.Error(err)
		}
		t.Logf("%d records written during the walk of %d", writes, len(got))
		checkWalk(t, got, existing)
	})
	if len(before) != walkSize {
		t.Errorf("%d records before the walks", len(before))
	}
}

// checkWalk: no id twice, and every id that existed before the walk seen.
func checkWalk(t testing.TB, got, existing []string) {
	t.Helper()
	if d := duplicates(got); len(d) > 0 {
		t.Errorf("%d records seen twice: %v", len(d), d)
	}
	seen := map[string]bool{}
	for _, id := range got {
		seen[id] = true
	}
	var missed []string
	for _, id := range existing {
		if !seen[id] {
			missed = append(missed, id)
		}
	}
	if len(missed) > 0 {
		t.Errorf("%d records that existed before the walk were skipped: %v", len(missed), missed)
	}
}

func TestCursorWithRuleAndFilter(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	seedWalk(t, s, "gated", "n != null && n < 6")
	for _, c := range []struct{ name, query string }{
		{"view rule only", "sort=title"},
		{"view rule and a filter", "sort=-n&filter=" + url.QueryEscape("title ~ 't1' || title ~ 't3'")},
		{"view rule and a malformed filter", "sort=n&filter=" + url.QueryEscape("title ~")},
		{"a filter through the rule's own field", "sort=created&filter=" + url.QueryEscape("n >= 3")},
	} {
		t.Run(c.name, func(t *testing.T) {
			full := getPage(t, s, "/api/v1/gated?perPage=500&"+c.query, nil).ids
			got, _ := walk(t, s, "gated", c.query, 4, nil, nil)
			if !slices.Equal(got, full) {
				t.Errorf("walk %v\nlist %v", got, full)
			}
			if len(full) == 0 || len(full) == walkSize {
				t.Errorf("the rule or filter selected %d records: a useless case", len(full))
			}
			// Every record walked passes the rule.
			admitted := getPage(t, s, withFilter("gated", "n != null && n < 6"), s.AdminHeaders(t, nil)).ids
			for _, id := range got {
				if !slices.Contains(admitted, id) {
					t.Errorf("walked %s, which the view rule refuses", id)
				}
			}
		})
	}
	t.Run("admins walk every record", func(t *testing.T) {
		got, _ := walk(t, s, "gated", "sort=n", 10, s.AdminHeaders(t, nil), nil)
		if len(got) != walkSize || len(duplicates(got)) > 0 {
			t.Errorf("admin walk: %d records", len(got))
		}
	})
}

func TestCursorErrors(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	seedWalk(t, s, "walk", "")
	full := getPage(t, s, "/api/v1/walk?perPage=500&sort=title", nil).ids
	first := getPage(t, s, "/api/v1/walk?perPage=10&sort=title&cursor=", nil)
	valid, _ := first.nextCursor.(string)
	if valid == "" {
		t.Fatalf("no nextCursor on the first page: %s", first.body)
	}
	b64 := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

	var sc []apitest.Scenario
	for _, c := range []string{
		"abc", "!!!", "%25%25", "%20", "null", "WzEsIngiXQ==", // padded base64 of [1,"x"]
		b64("[]"), b64("[1]"), b64(`[1,2]`), b64(`["t01","x","y"]`), b64(`[{},"x"]`), b64(`[[1],"x"]`),
		b64(`[true,"x"]`), b64(`{"a":1}`), b64(`"x"`), b64("null"), b64("not json"), b64(`[1,null]`),
		base64.StdEncoding.EncodeToString([]byte(`[">>>>","???"]`)), // standard alphabet: + and /
		valid[:len(valid)/2], valid + "@",
	} {
		sc = append(sc, apitest.Scenario{
			Name: "malformed cursor " + c, URL: "/api/v1/walk?sort=title&cursor=" + c,
			ExpectedStatus: http.StatusBadRequest, ExpectedContent: []string{"Malformed cursor"},
		})
	}
	for _, sort := range []string{"title,n", "title,-created", "-n,%2Btitle", "id,title"} {
		sc = append(sc,
			apitest.Scenario{Name: "sort=" + sort + " with an empty cursor", URL: "/api/v1/walk?sort=" + sort + "&cursor=", ExpectedStatus: http.StatusBadRequest},
			apitest.Scenario{Name: "sort=" + sort + " with a cursor", URL: "/api/v1/walk?sort=" + sort + "&cursor=" + valid, ExpectedStatus: http.StatusBadRequest},
			apitest.Scenario{Name: "sort=" + sort + " without a cursor is fine", URL: "/api/v1/walk?sort=" + sort, ExpectedStatus: http.StatusOK,
				NotExpectedContent: []string{`"nextCursor"`}},
		)
	}
	apitest.Run(t, s, sc)

	t.Run("trailing bytes after the position", func(t *testing.T) {
		c := b64(`["t01","x"]xx`)
		res, body := s.Do(t, http.MethodGet, "/api/v1/walk?sort=title&cursor="+c, nil, nil)
		apitest.CheckCommon(t, res, body)
		if res.StatusCode != http.StatusBadRequest {
			t.Errorf("%d %s", res.StatusCode, body)
		}
	})

	sc = []apitest.Scenario{
		{
			Name: "unknown columns do not count", URL: "/api/v1/walk?sort=title,nope,-alsonope&cursor=", ExpectedStatus: http.StatusOK,
		},
		apitest.Scenario{
			Name: "an empty cursor is the first page", URL: "/api/v1/walk?perPage=10&sort=title&cursor=", ExpectedStatus: http.StatusOK,
			ExpectedContent: []string{`"page":1`, `"perPage":10`, `"totalItems":95`},
			AfterFunc: func(t testing.TB, s *apitest.Server, body []byte) {
				if got := dataIDs(t, body); !slices.Equal(got, full[:10]) {
					t.Errorf("first page %v, want %v", got, full[:10])
				}
			},
		},
		apitest.Scenario{
			Name: "page is ignored in cursor mode", URL: "/api/v1/walk?perPage=10&sort=title&page=4&cursor=", ExpectedStatus: http.StatusOK,
			ExpectedContent: []string{`"page":1`},
			AfterFunc: func(t testing.TB, s *apitest.Server, body []byte) {
				if got := dataIDs(t, body); !slices.Equal(got, full[:10]) {
					t.Errorf("first page %v, want %v", got, full[:10])
				}
			},
		},
		apitest.Scenario{
			Name: "the second page; totals still count every record", URL: "/api/v1/walk?perPage=10&sort=title&cursor=" + valid,
			ExpectedStatus: http.StatusOK, ExpectedContent: []string{`"totalItems":95`, `"totalPages":10`, `"page":1`},
			AfterFunc: func(t testing.TB, s *apitest.Server, body []byte) {
				if got := dataIDs(t, body); !slices.Equal(got, full[10:20]) {
					t.Errorf("second page %v, want %v", got, full[10:20])
				}
			},
		},
		apitest.Scenario{
			Name: "skipTotal in cursor mode", URL: "/api/v1/walk?perPage=10&sort=title&skipTotal=1&cursor=", ExpectedStatus: http.StatusOK,
			ExpectedContent: []string{`"totalItems":-1`, `"nextCursor":"`},
		},
		apitest.Scenario{
			Name: "a list without cursor has no nextCursor", URL: "/api/v1/walk?perPage=10", ExpectedStatus: http.StatusOK,
			NotExpectedContent: []string{`"nextCursor"`},
		},
		apitest.Scenario{
			Name: "a filter that selects nothing: an empty page and a null cursor", URL: withFilter("walk", "title = 'none'") + "&cursor=",
			ExpectedStatus: http.StatusOK, ExpectedContent: []string{`"data":[]`, `"nextCursor":null`},
		},
	}
	apitest.Run(t, s, sc)
}
