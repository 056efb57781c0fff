package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"testing"
	"time"

	"svcd/api/apitest"
)

// nextSecond moves clock to the start of its next unix second, so that
// history entries made after it have a later `at` than those before, and
// returns that second.
func nextSecond(clock *apitest.Clock) int64 {
	next := clock.Now().Truncate(time.Second).Add(time.Second)
	clock.Set(next)
	return next.Unix()
}

type historyEntry struct {
	ID        float64        `json:"id"`
	Coll      string         `json:"collection"`
	RecordID  string         `json:"record_id"`
	Op        string         `json:"op"`
	At        float64        `json:"at"`
	Snapshot  map[string]any `json:"snapshot"`
	ActorID   string         `json:"actor_id"`
	ActorType string         `json:"actor_type"`
}

type historyPage struct {
	Data struct {
		Data       []historyEntry `json:"data"`
		Page       int            `json:"page"`
		PerPage    int            `json:"perPage"`
		TotalItems int            `json:"totalItems"`
		TotalPages int            `json:"totalPages"`
	} `json:"data"`
}

// historyDo sends a request and decodes the JSON answer (numbers as
// float64), failing unless the status is want.
func historyDo(t *testing.T, s *apitest.Server, method, path string, body any, headers map[string]string, want int) map[string]any {
	t.Helper()
	res, b := s.Do(t, method, path, body, headers)
	if res.StatusCode != want {
		t.Fatalf("%s %s: %d %s, want %d", method, path, res.StatusCode, b, want)
	}
	var m map[string]any
	if len(b) > 0 {
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
	}
	return m
}

// adminID is the id of the test server's admin.
func adminID(t *testing.T, s *apitest.Server) string {
	t.Helper()
	l := historyDo(t, s, http.MethodGet, "/api/v1/admin/admins", nil, s.AdminHeaders(t, nil), http.StatusOK)
	admins, _ := l["data"].([]any)
	if len(admins) != 1 {
		t.Fatalf("admins %v", l)
	}
	return admins[0].(map[string]any)["id"].(string)
}

func getHistory(t *testing.T, s *apitest.Server, caller, path string, want int) historyPage {
	t.Helper()
	res, body := s.Do(t, http.MethodGet, path, nil, as(t, s, caller, nil))
	if res.StatusCode != want {
		t.Fatalf("GET %s as %q: %d %s, want %d", path, caller, res.StatusCode, body, want)
	}
	var h historyPage
	if want == http.StatusOK {
		if err := json.Unmarshal(body, &h); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

func historySummary(h historyPage) []string {
	var out []string
	for _, e := range h.Data.Data {
		out = append(out, fmt.Sprintf("%s:%s/%s:%v", e.Op, e.ActorType, e.ActorID, e.Snapshot["title"]))
	}
	return out
}

func TestRecordHistory(t *testing.T) {
	t.Parallel()
	clock := newClock()
	s := startWithUsersOpts(t, apitest.Options{Clock: clock.Now})
	s.CreateCollection(t, public(coll("pages", "base", []map[string]any{f("title", "text"), f("note", "text", "hidden", true), f("n", "number")},
		"history_enabled", true)))
	s.CreateCollection(t, public(coll("plain", "base", []map[string]any{f("title", "text")})))
	s.CreateCollection(t, coll("mine", "base", []map[string]any{f("title", "text"), f("owner", "text")},
		"history_enabled", true, "view_rule", "owner = @request.auth.id", "create_rule", "", "update_rule", "owner = @request.auth.id"))

	doc := historyDo(t, s, http.MethodPost, "/api/v1/pages", map[string]any{"title": "v1", "note": "n1", "n": 1}, as(t, s, "admin", nil), http.StatusCreated)["data"].(map[string]any)
	id := doc["id"].(string)
	t1 := nextSecond(clock)
	historyDo(t, s, http.MethodPatch, "/api/v1/pages/"+id, map[string]any{"title": "v2", "n": 2}, as(t, s, "alice", nil), http.StatusOK)
	t2 := nextSecond(clock)
	historyDo(t, s, http.MethodPatch, "/api/v1/pages/"+id, map[string]any{"title": "v3"}, nil, http.StatusOK)

	admin := adminID(t, s)
	h := getHistory(t, s, "", "/api/v1/pages/"+id+"/history", http.StatusOK)
	if got, want := historySummary(h), []string{"update:anonymous/:v3", "update:user/alice:v2", "create:admin/" + admin + ":v1"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("history %v, want %v", got, want)
	}
	if h.Data.Page != 1 || h.Data.PerPage != 30 || h.Data.TotalItems != 3 || h.Data.TotalPages != 1 {
		t.Fatalf("page info %+v", h.Data)
	}
	e := h.Data.Data[1]
	if e.Coll != "pages" || e.RecordID != id || int64(e.At) < t1 || int64(e.At) >= t2 || e.Snapshot["id"] != id || e.Snapshot["n"] != float64(2) {
		t.Fatalf("entry %+v", e)
	}
	// Hidden fields: for admins only, as on the record routes.
	if _, ok := e.Snapshot["note"]; ok {
		t.Fatalf("hidden field shown to anonymous: %v", e.Snapshot)
	}
	if ha := getHistory(t, s, "admin", "/api/v1/pages/"+id+"/history", http.StatusOK); ha.Data.Data[2].Snapshot["note"] != "n1" {
		t.Fatalf("admin snapshot %v", ha.Data.Data[2].Snapshot)
	}
	// Paging: newest first, perPage capped at 200.
	if p := getHistory(t, s, "", "/api/v1/pages/"+id+"/history?perPage=1&page=2", http.StatusOK); len(p.Data.Data) != 1 || p.Data.Data[0].Snapshot["title"] != "v2" || p.Data.TotalPages != 3 {
		t.Fatalf("page 2: %+v", p.Data)
	}
	if p := getHistory(t, s, "", "/api/v1/pages/"+id+"/history?perPage=5000", http.StatusOK); p.Data.PerPage != 200 {
		t.Fatalf("perPage %d", p.Data.PerPage)
	}

	// Restore: admin only, `at` required, the snapshot at or before it.
	restore := "/api/v1/pages/" + id + "/restore"
	historyDo(t, s, http.MethodPost, restore+"?at="+strconv.FormatInt(t1, 10), nil, nil, http.StatusForbidden)
	historyDo(t, s, http.MethodPost, restore+"?at="+strconv.FormatInt(t1, 10), nil, as(t, s, "alice", nil), http.StatusForbidden)
	for _, bad := range []string{"", "?at=", "?at=yesterday"} {
		historyDo(t, s, http.MethodPost, restore+bad, nil, as(t, s, "admin", nil), http.StatusUnprocessableEntity)
	}
	historyDo(t, s, http.MethodPost, restore+"?at=1000", nil, as(t, s, "admin", nil), http.StatusNotFound)
	rec := apitest.Obj(t, historyDo(t, s, http.MethodPost, restore+"?at="+strconv.FormatInt(t1, 10), nil, as(t, s, "admin", nil), http.StatusOK)["data"])
	if rec["title"] != "v2" || rec["n"] != float64(2) || rec["note"] != "n1" || rec["id"] != id || rec["created"] != doc["created"] {
		t.Fatalf("restored %v", rec)
	}
	h = getHistory(t, s, "", "/api/v1/pages/"+id+"/history", http.StatusOK)
	if got := historySummary(h)[0]; got != "update:admin/"+admin+":v2" || h.Data.TotalItems != 4 {
		t.Fatalf("the restore's own entry: %v", historySummary(h))
	}

	// Deleted: the delete is an entry with the record as it was; the
	// history stays for admins; restore answers 409.
	historyDo(t, s, http.MethodDelete, "/api/v1/pages/"+id, nil, nil, http.StatusNoContent)
	getHistory(t, s, "", "/api/v1/pages/"+id+"/history", http.StatusNotFound)
	h = getHistory(t, s, "admin", "/api/v1/pages/"+id+"/history", http.StatusOK)
	if got := historySummary(h)[0]; got != "delete:anonymous/:v2" {
		t.Fatalf("delete entry %v", historySummary(h))
	}
	historyDo(t, s, http.MethodPost, restore+"?at="+strconv.FormatInt(t2, 10), nil, as(t, s, "admin", nil), http.StatusConflict)

	// Collections without history, unknown records and collections: 404.
	p := historyDo(t, s, http.MethodPost, "/api/v1/plain", map[string]any{"title": "x"}, nil, http.StatusCreated)["data"].(map[string]any)
	getHistory(t, s, "admin", "/api/v1/plain/"+p["id"].(string)+"/history", http.StatusNotFound)
	historyDo(t, s, http.MethodPost, "/api/v1/plain/"+p["id"].(string)+"/restore?at=1", nil, as(t, s, "admin", nil), http.StatusNotFound)
	getHistory(t, s, "admin", "/api/v1/pages/nosuchrecord00/history", http.StatusNotFound)
	getHistory(t, s, "admin", "/api/v1/nosuch/abc/history", http.StatusNotFound)

	// The view rule is inherited: bob does not see alice's record or its
	// history.
	m := apitest.Obj(t, historyDo(t, s, http.MethodPost, "/api/v1/mine", map[string]any{"title": "a", "owner": "alice"}, as(t, s, "alice", nil), http.StatusCreated)["data"])
	if h := getHistory(t, s, "alice", "/api/v1/mine/"+m["id"].(string)+"/history", http.StatusOK); len(h.Data.Data) != 1 || h.Data.Data[0].ActorID != "alice" {
		t.Fatalf("alice's history %+v", h.Data)
	}
	getHistory(t, s, "bob", "/api/v1/mine/"+m["id"].(string)+"/history", http.StatusNotFound)
	getHistory(t, s, "", "/api/v1/mine/"+m["id"].(string)+"/history", http.StatusNotFound)

	// A refused write leaves no entry: the command rolled back.
	historyDo(t, s, http.MethodPatch, "/api/v1/mine/"+m["id"].(string), map[string]any{"title": "b"}, as(t, s, "bob", nil), http.StatusNotFound)
	if h := getHistory(t, s, "admin", "/api/v1/mine/"+m["id"].(string)+"/history", http.StatusOK); h.Data.TotalItems != 1 {
		t.Fatalf("refused write left history: %+v", h.Data)
	}
	// Turning history off hides it (404); deleting the collection drops it.
}
