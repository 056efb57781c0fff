package api_test

import (
	"net/http"
	"reflect"
	"strconv"
	"testing"
)

// TestBatchRealtime: a committed batch is one event per record change, all
// with the batch's Raft index and ".n" suffixes in entry order; a batch
// that rolls back emits nothing.
func TestBatchRealtime(t *testing.T) {
	t.Parallel()
	s := rtServer(t)
	c := openSSE(t, s, "topics=posts", nil)
	if f := c.next(); f.event != "subscribed" {
		t.Fatalf("frame %+v", f)
	}
	const id = "rtbatch00000001"
	// A failing batch first: its create must never be seen.
	status, out, _ := runBatch(t, s, nil, []map[string]any{
		entry("POST", "/api/v1/posts", map[string]any{"title": "rolled back"}),
		entry("DELETE", "/api/v1/posts/nosuchrecord123", nil),
	})
	expectBatchError(t, status, out, http.StatusNotFound, 1, "")
	status, out, res := runBatch(t, s, nil, []map[string]any{
		entry("POST", "/api/v1/posts", map[string]any{"id": id, "title": "b1"}),
		entry("GET", "/api/v1/posts/"+id, nil),
		entry("POST", "/api/v1/posts", map[string]any{"title": "b2"}),
		entry("PATCH", "/api/v1/posts/"+id, map[string]any{"title": "b3"}),
		entry("DELETE", "/api/v1/posts/"+id, nil),
	})
	answers(t, status, out)
	idx, err := strconv.ParseUint(res.Header.Get("X-Svc-Index"), 10, 64)
	if err != nil {
		t.Fatalf("X-Svc-Index %q", res.Header.Get("X-Svc-Index"))
	}
	got, ids := c.events(4)
	if want := []string{"create:posts:b1", "create:posts:b2", "update:posts:b3", "delete:posts"}; !reflect.DeepEqual(got, want) {
		t.Errorf("events %v, want %v", got, want)
	}
	n := strconv.FormatUint(idx, 10)
	if want := []string{n, n + ".1", n + ".2", n + ".3"}; !reflect.DeepEqual(ids, want) {
		t.Errorf("event ids %v, want %v", ids, want)
	}
	c.quiet()
}
