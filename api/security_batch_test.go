package api_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"svcd/api/apitest"
)

// Finding 5 of the security review (issue 13): a batch of 100 list
// operations was a Raft command executed in the single apply loop, so four
// anonymous read batches delayed an unrelated write by 11.7 s, and every
// read batch added a log entry. A batch that only reads is served by the
// node, without the log; the reads of a batch that writes share a budget
// of SQLite steps, the same on every node.
func TestBatchReadsStayOutOfTheApplyLoop(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, public(coll("big", "base", []map[string]any{f("title", "text"), f("n", "number")})))
	const rows = 4000
	for i := 0; i < rows; i += 100 {
		var reqs []map[string]any
		for j := i; j < i+100; j++ {
			reqs = append(reqs, entry("POST", "/api/v1/big", map[string]any{"title": fmt.Sprintf("title %05d", j), "n": j}))
		}
		st, out, _ := runBatch(t, s, nil, reqs)
		answers(t, st, out)
	}
	list := "/api/v1/big?perPage=50&filter=" + url.QueryEscape(`title ~ "9" && n >= 0`) + "&sort=-title"
	reads := make([]map[string]any, 100)
	for i := range reads {
		reads[i] = entry("GET", list, nil)
	}

	before := s.Stack.Store.AppliedIndex()
	st, out, res := runBatch(t, s, map[string]string{}, reads)
	items := answers(t, st, out)
	if after := s.Stack.Store.AppliedIndex(); after != before || res.Header.Get("X-Svc-Index") != "" {
		t.Fatalf("a read-only batch went through the log: applied index %d -> %d, X-Svc-Index %q", before, after, res.Header.Get("X-Svc-Index"))
	}
	if len(items) != 100 || apitest.Int(t, apitest.Obj(t, items[99]["body"])["totalItems"]) == 0 {
		t.Fatalf("read-only batch answers: %d items", len(items))
	}
	// Same answers as the single list (same shape, same rows).
	single := s.MustAdmin(t, http.StatusOK, "GET", list, nil)
	if apitest.Obj(t, items[0]["body"])["totalItems"] != single["totalItems"] {
		t.Errorf("batch list total %v, single list %v", apitest.Obj(t, items[0]["body"])["totalItems"], single["totalItems"])
	}
	// A failing read still fails the whole read-only batch, naming it.
	st, out, _ = runBatch(t, s, map[string]string{}, []map[string]any{reads[0], entry("GET", "/api/v1/big/nosuchrecord0000", nil)})
	expectBatchError(t, st, out, http.StatusNotFound, 1, "")

	// A batch that writes: cheap reads pass...
	st, out, _ = runBatch(t, s, nil, []map[string]any{
		entry("POST", "/api/v1/big", map[string]any{"title": "fresh", "n": -1}),
		entry("GET", "/api/v1/big?perPage=5&filter="+url.QueryEscape(`title = "fresh"`), nil),
	})
	if got := apitest.Obj(t, answers(t, st, out)[1]["body"]); apitest.Int(t, got["totalItems"]) != 1 {
		t.Fatalf("a batch's read of its own write: %v", got)
	}
	// ...and a hundred full scans do not: one 422 naming the budget, and
	// nothing of the batch is applied.
	mixed := append([]map[string]any{entry("POST", "/api/v1/big", map[string]any{"title": "never", "n": -2})}, reads[:99]...)
	st, out, _ = runBatch(t, s, nil, mixed)
	if msg, _ := out["error"].(string); st != http.StatusUnprocessableEntity || !strings.HasPrefix(msg, "batch failed at request ") ||
		!strings.Contains(msg, "batch of their own") {
		t.Errorf("a batch that writes with a hundred full scans: %d %.300v", st, out)
	}
	if n := apitest.Int(t, s.MustAdmin(t, http.StatusOK, "GET", "/api/v1/big?perPage=1&filter="+url.QueryEscape(`title = "never"`), nil)["totalItems"]); n != 0 {
		t.Errorf("a refused batch left its create behind")
	}
}
