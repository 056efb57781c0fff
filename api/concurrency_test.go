package api_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"

	"svcd/api/apitest"
)

// answer is one response collected by a goroutine; the checks run on the
// test goroutine afterwards.
type answer struct {
	res  *http.Response
	body []byte
	err  error
}

// race sends n requests at once (req(i) gives the body) and returns the
// answers in order.
func race(s *apitest.Server, n int, method, path string, headers map[string]string, req func(i int) any) []answer {
	out := make([]answer, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			res, body, err := s.Send(method, path, req(i), headers)
			out[i] = answer{res, body, err}
		}()
	}
	close(start)
	wg.Wait()
	return out
}

// TestConcurrentIfMatch: 50 PATCHes with the same If-Match tag race; the
// precondition is decided at apply time, so exactly one wins and the others
// get 412 with the winner's tag.
func TestConcurrentIfMatch(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, coll("counters", "base", []map[string]any{f("n", "number")}))
	id := s.CreateRecord(t, "counters", map[string]any{"n": 0})["id"].(string)
	_, etag := getRecord(t, s, "counters", id)

	const n = 50
	answers := race(s, n, http.MethodPatch, "/api/v1/counters/"+id, s.AdminHeaders(t, map[string]string{"If-Match": etag}),
		func(i int) any { return map[string]any{"n": i + 1} })

	var winner *answer
	failed := 0
	for i := range answers {
		a := &answers[i]
		if a.err != nil {
			t.Fatalf("request %d: %v", i, a.err)
		}
		apitest.CheckCommon(t, a.res, a.body)
		switch a.res.StatusCode {
		case http.StatusOK:
			if winner != nil {
				t.Errorf("a second PATCH succeeded: %s", a.body)
			}
			winner = a
		case http.StatusPreconditionFailed:
			failed++
		default:
			t.Errorf("unexpected status %d: %s", a.res.StatusCode, a.body)
		}
	}
	if winner == nil || failed != n-1 {
		t.Fatalf("%d got 412 and winner %v; want exactly one 200 and %d 412s", failed, winner != nil, n-1)
	}
	wtag := winner.res.Header.Get("ETag")
	wn := fmt.Sprint(apitest.Obj(t, apitest.DecodeMap(t, winner.body)["data"])["n"])
	for _, a := range answers {
		if a.res.StatusCode == http.StatusPreconditionFailed && a.res.Header.Get("ETag") != wtag {
			t.Errorf("412 carried ETag %q, want the winner's %q", a.res.Header.Get("ETag"), wtag)
		}
	}
	rec, cur := getRecord(t, s, "counters", id)
	if cur != wtag || fmt.Sprint(rec["n"]) != wn {
		t.Errorf("stored n=%v tag %s; the winner wrote n=%s tag %s", rec["n"], cur, wn, wtag)
	}
}

// TestConcurrentIfMatchDelete: 20 DELETEs with the same If-Match tag race;
// the precondition is checked at apply time, so exactly one deletes the
// record. The others find it gone: 404, or 412 (RFC 9110: If-Match fails
// when there is no current representation).
func TestConcurrentIfMatchDelete(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, coll("counters", "base", []map[string]any{f("n", "number")}))
	id := s.CreateRecord(t, "counters", map[string]any{"n": 0})["id"].(string)
	_, etag := getRecord(t, s, "counters", id)

	const n = 20
	answers := race(s, n, http.MethodDelete, "/api/v1/counters/"+id, s.AdminHeaders(t, map[string]string{"If-Match": etag}),
		func(int) any { return nil })
	deleted := 0
	for i, a := range answers {
		if a.err != nil {
			t.Fatalf("request %d: %v", i, a.err)
		}
		apitest.CheckCommon(t, a.res, a.body)
		switch a.res.StatusCode {
		case http.StatusNoContent:
			deleted++
			if len(a.body) != 0 {
				t.Errorf("204 with a body: %s", a.body)
			}
		case http.StatusNotFound, http.StatusPreconditionFailed:
		default:
			t.Errorf("request %d: unexpected status %d: %s", i, a.res.StatusCode, a.body)
		}
	}
	if deleted != 1 {
		t.Errorf("%d DELETEs succeeded, want exactly 1", deleted)
	}
	apitest.Scenario{URL: "/api/v1/counters/" + id, Admin: true, ExpectedStatus: http.StatusNotFound}.Test(t, s)

	// A stale tag never deletes: a PATCH moves the record on first.
	id = s.CreateRecord(t, "counters", map[string]any{"n": 0})["id"].(string)
	_, etag = getRecord(t, s, "counters", id)
	s.MustAdmin(t, http.StatusOK, http.MethodPatch, "/api/v1/counters/"+id, map[string]any{"n": 1})
	_, cur := getRecord(t, s, "counters", id)
	answers = race(s, n, http.MethodDelete, "/api/v1/counters/"+id, s.AdminHeaders(t, map[string]string{"If-Match": etag}),
		func(int) any { return nil })
	for i, a := range answers {
		if a.err != nil {
			t.Fatalf("request %d: %v", i, a.err)
		}
		apitest.CheckCommon(t, a.res, a.body)
		if a.res.StatusCode != http.StatusPreconditionFailed || a.res.Header.Get("ETag") != cur {
			t.Errorf("stale If-Match DELETE: %d ETag %q, want 412 with %q: %s", a.res.StatusCode, a.res.Header.Get("ETag"), cur, a.body)
		}
	}
	getRecord(t, s, "counters", id) // still there
}

// TestConcurrentCreates: concurrent writes are batched into shared Raft
// entries and transactions; every one must be applied exactly once, and a
// unique violation must fail only its own command.
func TestConcurrentCreates(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, coll("events", "base", []map[string]any{f("seq", "number", "unique", true)}))
	const n = 60
	// Requests 2k and 2k+1 share a seq value: exactly one of each pair wins.
	answers := race(s, n, http.MethodPost, "/api/v1/events", s.AdminHeaders(t, nil),
		func(i int) any { return map[string]any{"seq": i / 2} })
	created := map[string]bool{}
	for i, a := range answers {
		if a.err != nil {
			t.Fatalf("request %d: %v", i, a.err)
		}
		apitest.CheckCommon(t, a.res, a.body)
		switch a.res.StatusCode {
		case http.StatusCreated:
			created[apitest.Obj(t, apitest.DecodeMap(t, a.body)["data"])["id"].(string)] = true
		case http.StatusUnprocessableEntity:
		default:
			t.Errorf("status %d: %s", a.res.StatusCode, a.body)
		}
	}
	if len(created) != n/2 {
		t.Errorf("%d distinct records created, want %d", len(created), n/2)
	}
	out := s.MustAdmin(t, http.StatusOK, http.MethodGet, "/api/v1/events?perPage=500", nil)
	if apitest.Int(t, out["totalItems"]) != n/2 {
		t.Errorf("totalItems = %v, want %d", out["totalItems"], n/2)
	}
}
