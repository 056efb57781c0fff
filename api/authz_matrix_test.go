package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"svcd/api/apitest"
)

// TestAuthorizationMatrix (issue 13): for a schema with an auth collection,
// an owner-ruled, an admin-only, a public, a hidden-field and a relation
// collection, and callers anonymous, two users, a guest, an impersonation,
// each admin role and scoped API tokens, every path that can reveal a value
// is taken, and what each caller learns is compared with what the rules say
// it may see (authz_model_test.go). A leak is an error naming the caller,
// the path and the value; a refusal of what the caller may see is one too.
//
// New ways to read (files, SQL, MCP, JavaScript helpers...) add their path
// to matrixPaths. Built with -tags svc_broken_rules the engine ignores
// rules, and this test must fail (TestAuthorizationMatrixCatchesBrokenRules).
func TestAuthorizationMatrix(t *testing.T) {
	t.Parallel()
	x := newMatrix(t)
	for _, p := range matrixPaths() {
		t.Run(p.name, func(t *testing.T) {
			x.path = p.name
			if p.all != nil {
				p.all(t, x)
				return
			}
			for _, c := range x.callers {
				p.run(t, x, c)
			}
		})
	}
	if n := len(matrixPaths()); n < 12 || len(x.callers) < 8 {
		t.Errorf("the matrix covers %d paths and %d callers; issue 13 asks for 12 and 8", n, len(x.callers))
	}
}

// matrix is the fixture: the node, record ids by key, ETags as the owner
// sees them, and the callers.
type matrix struct {
	t       *testing.T
	s       *apitest.Server
	ids     map[string]string // "coll/rec" -> id
	keys    map[string]string // id -> "coll/rec"
	etags   map[string]string // "coll/rec" -> ETag
	files   map[string]string // "coll/rec/field" -> stored file name (authz_files_test.go)
	callers []mcaller
	// path names the check being run (for messages).
	path string
}

func (x *matrix) id(coll, rec string) string { return x.ids[coll+"/"+rec] }

// leaks reports every marker of body that c may not see.
func (x *matrix) leaks(t *testing.T, c mcaller, what string, body []byte) {
	t.Helper()
	for _, m := range revealed(body) {
		if !c.allowed(m) {
			t.Errorf("LEAK %s via %s (%s): %s", c.name, x.path, what, m.label())
		}
	}
}

// get sends a request as c and returns the status and body.
func (x *matrix) get(t *testing.T, c mcaller, method, path string, body any, extra map[string]string) (int, []byte, http.Header) {
	t.Helper()
	h := map[string]string{}
	for k, v := range c.headers {
		h[k] = v
	}
	for k, v := range extra {
		h[k] = v
	}
	res, out := x.s.Do(t, method, path, body, h)
	apitest.CheckCommon(t, res, out)
	if res.StatusCode >= 500 {
		t.Errorf("%s via %s: %s %s: %d %s", c.name, x.path, method, path, res.StatusCode, out)
	}
	return res.StatusCode, out, res.Header
}

// listKeys reads the keys of the records of a list answer (svcd's data or
// PocketBase's items), in order.
func (x *matrix) listKeys(t *testing.T, body []byte) []string {
	t.Helper()
	var l struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
		Items []struct { // PocketBase's list (authz_pbcompat_test.go)
			ID string `json:"id"`
		} `json:"items"`
	}
	if err := json.Unmarshal(body, &l); err != nil {
		t.Fatalf("list answer %s: %v", body, err)
	}
	var out []string
	for _, r := range append(l.Data, l.Items...) {
		out = append(out, x.keys[r.ID])
	}
	return out
}

// mpath is one way to reveal values: run checks one caller, or all (when
// set) checks every caller at once (the realtime paths: every caller
// subscribes, then the same changes reach all of them).
type mpath struct {
	name string
	run  func(t *testing.T, x *matrix, c mcaller)
	all  func(t *testing.T, x *matrix)
}

func matrixPaths() []mpath {
	return append([]mpath{
		{name: "get", run: pathGet},
		{name: "list", run: pathList},
		{name: "filter", run: pathFilter},
		{name: "sort", run: pathSort},
		{name: "expand-1", run: pathExpand([]string{"pub?expand=link,adm", "notes?expand=pub,owned", "owned?expand=owner"})},
		{name: "expand-2", run: pathExpand([]string{"notes?expand=pub.link,pub.adm,owned.owner", "pub?expand=link.owner", "notes?expand=pub.link.owner"})},
		{name: "back-relation", run: pathExpand([]string{"pub?expand=notes_via_pub", "owned?expand=notes_via_owned,pub_via_link", "members?expand=owned_via_owner",
			"vault?expand=pub_via_adm", "pub?expand=notes_via_pub.owned"})},
		{name: "search", run: pathSearch},
		{name: "vector", run: pathVector},
		{name: "history", run: pathHistory},
		{name: "batch", run: pathBatch},
		{name: "csv", run: pathCSV},
		{name: "realtime-ws", all: pathRealtimeWS},
		{name: "realtime-sse", all: pathRealtimeSSE},
		{name: "etag", run: pathETag},
		{name: "file-download", run: pathFileDownload},
		{name: "file-token", run: pathFileToken},
		{name: "file-upload", run: pathFileUpload},
		{name: "file-admin", run: pathFileAdmin},
		{name: "js-find", run: pathJSFind},
		{name: "js-query", run: pathJSQuery},
		{name: "oauth2", all: pathOAuth2},
		{name: "passkeys", all: pathPasskeys},
		{name: "email-change", run: pathEmailChange}, // authz_email_change_test.go
		{name: "sql", run: pathSQL},
		{name: "mcp", all: pathMCP},
		{name: "openapi", run: pathOpenAPI},
		{name: "ops", run: pathOps},
	}, pbMatrixPaths()...) // authz_pbcompat_test.go
}

func pathGet(t *testing.T, x *matrix, c mcaller) {
	for _, coll := range matrixCollections() {
		for _, rec := range matrixRecords[coll] {
			st, body, _ := x.get(t, c, "GET", "/api/v1/"+coll+"/"+x.id(coll, rec), nil, nil)
			if want := c.wantStatus(coll, rec); st != want {
				t.Errorf("%s: GET %s/%s: %d, want %d", c.name, coll, rec, st, want)
			}
			x.leaks(t, c, coll+"/"+rec, body)
		}
	}
}

func pathList(t *testing.T, x *matrix, c mcaller) {
	for _, coll := range matrixCollections() {
		st, body, _ := x.get(t, c, "GET", "/api/v1/"+coll+"?perPage=100", nil, nil)
		if want := c.wantListStatus(coll); st != want {
			t.Errorf("%s: list %s: %d, want %d", c.name, coll, st, want)
			continue
		}
		x.leaks(t, c, coll, body)
		if st != 200 {
			continue
		}
		var want []string
		for _, rec := range matrixRecords[coll] {
			if c.mayView(coll, rec) {
				want = append(want, coll+"/"+rec)
			}
		}
		got := x.listKeys(t, body)
		sort.Strings(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s: list %s = %v, the rules admit %v", c.name, coll, got, want)
		}
	}
}

// filterProbes ask, of the list of a collection, whether a value is what
// it is: a filter with the true value and one with a decoy. Answers that
// differ reveal the value.
var filterProbes = []struct {
	coll, expr string
	target     marker
}{
	{"pub", `code = "%s"`, marker{"pub", "pa", "code"}},
	{"pub", `link.secret = "%s"`, marker{"owned", "oa", "secret"}},
	{"pub", `link.title = "%s"`, marker{"owned", "oa", "title"}},
	{"pub", `adm.name = "%s"`, marker{"vault", "va", "name"}},
	{"pub", `link.owner.nick = "%s"`, marker{"members", "ua", "nick"}},
	{"pub", `link.owner.email = "%s@example.com"`, marker{"members", "ua", "email"}},
	{"pub", `notes_via_pub.text ?= "%s"`, marker{"notes", "ta", "text"}},
	{"pub", `@collection.vault.name ?= "%s"`, marker{"vault", "va", "name"}},
	{"pub", `@collection.owned.secret ?= "%s"`, marker{"owned", "ob", "secret"}},
	{"pub", `@collection.members.name ?= "%s"`, marker{"members", "ub", "name"}},
	{"notes", `pub.code = "%s"`, marker{"pub", "pb", "code"}},
	{"notes", `owned.title = "%s"`, marker{"owned", "ob", "title"}},
	{"notes", `pub.adm.name = "%s"`, marker{"vault", "va", "name"}},
	{"pins", `pin = "%s"`, marker{"pins", "na", "pin"}},
	{"owned", `secret = "%s"`, marker{"owned", "oa", "secret"}},
	{"owned", `owner.name = "%s"`, marker{"members", "ua", "name"}},
	{"members", `nick = "%s"`, marker{"members", "ua", "nick"}},
}

func pathFilter(t *testing.T, x *matrix, c mcaller) {
	for _, p := range filterProbes {
		st, yes, _ := x.get(t, c, "GET", "/api/v1/"+p.coll+"?perPage=100&filter="+url.QueryEscape(fmt.Sprintf(p.expr, p.target)), nil, nil)
		_, no, _ := x.get(t, c, "GET", "/api/v1/"+p.coll+"?perPage=100&filter="+url.QueryEscape(fmt.Sprintf(p.expr, "mdecoy")), nil, nil)
		if st == 200 && !slices.Equal(x.listKeys(t, yes), x.listKeys(t, no)) && !c.allowed(p.target) {
			t.Errorf("LEAK %s via filter on %s (%s): %s", c.name, p.coll, p.expr, p.target.label())
		}
	}
}

// pathSort: sorting by a hidden field orders by it only for callers who
// may see it (pa's code sorts before pb's; their default order is the
// other way round).
func pathSort(t *testing.T, x *matrix, c mcaller) {
	st, asc, _ := x.get(t, c, "GET", "/api/v1/pub?sort=code", nil, nil)
	_, desc, _ := x.get(t, c, "GET", "/api/v1/pub?sort=-code", nil, nil)
	if st == 200 && !slices.Equal(x.listKeys(t, asc), x.listKeys(t, desc)) && !c.full("pub") {
		t.Errorf("LEAK %s via sort: the order of pub's hidden code", c.name)
	}
	st, asc, _ = x.get(t, c, "GET", "/api/v1/owned?sort=secret", nil, nil)
	_, desc, _ = x.get(t, c, "GET", "/api/v1/owned?sort=-secret", nil, nil)
	if st == 200 && !slices.Equal(x.listKeys(t, asc), x.listKeys(t, desc)) && !c.full("owned") {
		t.Errorf("LEAK %s via sort: the order of owned's hidden secret", c.name)
	}
}

func pathExpand(queries []string) func(t *testing.T, x *matrix, c mcaller) {
	return func(t *testing.T, x *matrix, c mcaller) {
		for _, q := range queries {
			coll, query, _ := strings.Cut(q, "?")
			_, body, _ := x.get(t, c, "GET", "/api/v1/"+coll+"?perPage=100&"+query, nil, nil)
			x.leaks(t, c, q, body)
			for _, rec := range matrixRecords[coll] {
				_, body, _ := x.get(t, c, "GET", "/api/v1/"+coll+"/"+x.id(coll, rec)+"?"+query, nil, nil)
				x.leaks(t, c, coll+"/"+rec+"?"+query, body)
			}
		}
	}
}

// pathSearch: a full-text search for a value finds its record only for
// callers who may see it there.
func pathSearch(t *testing.T, x *matrix, c mcaller) {
	for _, m := range markers() {
		if m.coll == "members" && m.field == "email" {
			continue // not searchable
		}
		st, body, _ := x.get(t, c, "GET", "/api/v1/"+m.coll+"?search="+m.String(), nil, nil)
		x.leaks(t, c, "search "+m.String(), body)
		found := st == 200 && slices.Contains(x.listKeys(t, body), m.coll+"/"+m.rec)
		if found && !c.allowed(m) {
			t.Errorf("LEAK %s via search: %s", c.name, m.label())
		}
		if !found && c.allowed(m) {
			t.Errorf("%s: a search for %s does not find it (%d)", c.name, m.label(), st)
		}
	}
}

// pathVector: pins has only a hidden vector field; pub a visible one.
// Scores of a hidden vector reveal it.
func pathVector(t *testing.T, x *matrix, c mcaller) {
	for _, q := range []string{"pins?nearVector=[1,0,0]&nearVectorField=hemb", "pins?nearVector=[1,0,0]", "pub?nearVector=[1,0,0]&nearVectorField=emb"} {
		coll, query, _ := strings.Cut(q, "?")
		st, body, _ := x.get(t, c, "GET", "/api/v1/"+coll+"?"+query, nil, nil)
		x.leaks(t, c, q, body)
		scored := st == 200 && strings.Contains(string(body), `"_score"`)
		if scored && coll == "pins" && !c.full("pins") {
			t.Errorf("LEAK %s via vector: scores of pins' hidden vector (%s)", c.name, q)
		}
		if !scored && c.full(coll) {
			t.Errorf("%s: %s: %d without scores", c.name, q, st)
		}
	}
}

func pathHistory(t *testing.T, x *matrix, c mcaller) {
	for _, coll := range []string{"owned", "pub"} {
		for _, rec := range matrixRecords[coll] {
			st, body, _ := x.get(t, c, "GET", "/api/v1/"+coll+"/"+x.id(coll, rec)+"/history", nil, nil)
			x.leaks(t, c, "history of "+coll+"/"+rec, body)
			if want := c.wantStatus(coll, rec); st != want {
				t.Errorf("%s: history of %s/%s: %d, want %d", c.name, coll, rec, st, want)
			}
		}
	}
}

// pathBatch: the same reads inside batches, read-only, with a write and
// with an upsert (served by the node, or applied by the state machine in
// a batch command, or in one of type 169 that holds an upsert).
func pathBatch(t *testing.T, x *matrix, c mcaller) {
	reads := []string{"/api/v1/pub?expand=link.owner,adm,notes_via_pub&filter=" + url.QueryEscape(`link.secret != ""`),
		"/api/v1/notes?expand=pub.link,owned.owner", "/api/v1/owned?expand=owner", "/api/v1/pins", "/api/v1/members",
		"/api/v1/vault", "/api/v1/pub/" + x.id("pub", "pa") + "?expand=link,adm"}
	for _, r := range reads {
		for _, write := range []string{"", "POST", "PUT"} {
			withWrite := write != ""
			reqs := []map[string]any{entry("GET", r, nil)}
			switch write {
			case "POST":
				reqs = append([]map[string]any{entry("POST", "/api/v1/scratch", map[string]any{"n": 1})}, reqs...)
			case "PUT":
				h := fnv.New64a()
				h.Write([]byte(c.name + r))
				id := fmt.Sprintf("%015x", h.Sum64())[:15]
				reqs = append([]map[string]any{entry("PUT", "/api/v1/scratch", map[string]any{"id": id, "n": 1})}, reqs...)
			}
			h := map[string]string{}
			for k, v := range c.headers {
				h[k] = v
			}
			res, body := x.s.Do(t, http.MethodPost, batchURL, map[string]any{"requests": reqs}, h)
			apitest.CheckCommon(t, res, body)
			x.leaks(t, c, fmt.Sprintf("batch %s (with a write: %v %s)", r, withWrite, write), body)
		}
	}
}

func pathCSV(t *testing.T, x *matrix, c mcaller) {
	for _, coll := range matrixCollections() {
		st, body, _ := x.get(t, c, "GET", "/api/v1/admin/export/"+coll, nil, nil)
		x.leaks(t, c, "export "+coll, body)
		if st == 200 && !(c.kind == kindAdmin && c.role != "viewer" || c.kind == kindToken && slices.Contains(c.scopes, "admin")) {
			t.Errorf("%s exported %s", c.name, coll)
		}
	}
}

// touchAll makes the owner update every record (a field nobody hides), so
// realtime subscribers receive each record as it now stands.
func (x *matrix) touchAll(t *testing.T, n int) {
	t.Helper()
	for _, coll := range matrixCollections() {
		for _, rec := range matrixRecords[coll] {
			x.s.MustAdmin(t, http.StatusOK, "PATCH", "/api/v1/"+coll+"/"+x.id(coll, rec), map[string]any{"bump": n})
		}
	}
}

// realtimeWait is how long a subscriber listens after the changes.
const realtimeWait = 400 * time.Millisecond

// wsSubscriber is a WebSocket of a caller with subscriptions, collecting
// every frame it receives.
type wsSubscriber struct {
	conn   *websocket.Conn
	mu     sync.Mutex
	frames [][]byte
	done   chan struct{}
}

func (x *matrix) subscribe(t *testing.T, ctx context.Context, c mcaller, subs ...map[string]any) *wsSubscriber {
	t.Helper()
	h := http.Header{}
	for k, v := range c.headers {
		h.Set(k, v)
	}
	conn, _, err := websocket.Dial(ctx, wsURL(x.s, ""), &websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		t.Fatalf("%s: dial: %v", c.name, err)
	}
	t.Cleanup(func() { conn.CloseNow() })
	if _, _, err := conn.Read(ctx); err != nil { // connected
		t.Fatal(err)
	}
	for _, sub := range subs {
		b, _ := json.Marshal(sub)
		if err := conn.Write(ctx, websocket.MessageText, b); err != nil {
			t.Fatal(err)
		}
		if _, _, err := conn.Read(ctx); err != nil { // subscribed
			t.Fatal(err)
		}
	}
	w := &wsSubscriber{conn: conn, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for {
			_, b, err := conn.Read(ctx)
			if err != nil {
				return
			}
			w.mu.Lock()
			w.frames = append(w.frames, b)
			w.mu.Unlock()
		}
	}()
	return w
}

// collected stops the subscriber and returns its frames.
func (w *wsSubscriber) collected() [][]byte {
	w.conn.CloseNow()
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.frames
}

// pathRealtimeWS: every delivery of a subscription to everything, and a
// subscription filter that reads a relation (with the true value and with
// a decoy: deliveries that differ reveal the value), for every caller.
func pathRealtimeWS(t *testing.T, x *matrix) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	probe := filterProbes[1]
	type subs struct{ all, yes, no *wsSubscriber }
	open := make([]subs, len(x.callers))
	for i, c := range x.callers {
		open[i] = subs{
			all: x.subscribe(t, ctx, c, map[string]any{"type": "subscribe", "topics": []string{"*"}}),
			yes: x.subscribe(t, ctx, c, map[string]any{"type": "subscribe", "topics": []string{"pub"}, "filter": fmt.Sprintf(probe.expr, probe.target)}),
			no:  x.subscribe(t, ctx, c, map[string]any{"type": "subscribe", "topics": []string{"pub"}, "filter": fmt.Sprintf(probe.expr, "mdecoy")}),
		}
	}
	x.touchAll(t, 1)
	time.Sleep(realtimeWait)
	for i, c := range x.callers {
		frames := open[i].all.collected()
		x.leaks(t, c, "websocket deliveries", slices.Concat(frames...))
		if want := x.visibleRecords(c); len(frames) < want {
			t.Errorf("%s: %d websocket deliveries, the rules admit %d", c.name, len(frames), want)
		}
		if ny, nn := len(open[i].yes.collected()), len(open[i].no.collected()); ny != nn && !c.allowed(probe.target) {
			t.Errorf("LEAK %s via realtime filter %q: %d deliveries with the value, %d with a decoy: %s", c.name, probe.expr, ny, nn, probe.target.label())
		}
	}
}

// sseSubscriber is an SSE stream of a caller subscribed to everything,
// collecting every line it receives.
type sseSubscriber struct {
	mu     sync.Mutex
	frames []byte
	done   chan struct{}
	cancel func()
}

func (x *matrix) openSSE(t *testing.T, c mcaller) *sseSubscriber {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, x.s.URL+"/api/v1/realtime?topics=*", nil)
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatalf("%s: open stream: %v", c.name, err)
	}
	w := &sseSubscriber{done: make(chan struct{}), cancel: cancel}
	connected := make(chan struct{})
	go func() {
		defer close(w.done)
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		first := true
		for sc.Scan() {
			w.mu.Lock()
			w.frames = append(w.frames, sc.Bytes()...)
			w.mu.Unlock()
			if first && strings.HasPrefix(sc.Text(), "data: ") {
				first = false
				close(connected)
			}
		}
	}()
	select {
	case <-connected:
	case <-time.After(5 * time.Second):
		cancel()
		t.Fatalf("%s: no connect frame", c.name)
	}
	return w
}

func (w *sseSubscriber) collected() []byte {
	w.cancel()
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.frames
}

func pathRealtimeSSE(t *testing.T, x *matrix) {
	open := make([]*sseSubscriber, len(x.callers))
	for i, c := range x.callers {
		open[i] = x.openSSE(t, c)
	}
	x.touchAll(t, 2)
	time.Sleep(realtimeWait)
	for i, c := range x.callers {
		frames := open[i].collected()
		x.leaks(t, c, "sse deliveries", frames)
		if got, want := strings.Count(string(frames), "event: update"), x.visibleRecords(c); got < want {
			t.Errorf("%s: %d SSE deliveries, the rules admit %d", c.name, got, want)
		}
	}
}

// visibleRecords counts the records c may view.
func (x *matrix) visibleRecords(c mcaller) int {
	n := 0
	for _, coll := range matrixCollections() {
		for _, rec := range matrixRecords[coll] {
			if c.mayView(coll, rec) {
				n++
			}
		}
	}
	return n
}

// pathETag: a conditional GET never tells a caller that a record it may
// not view is unchanged (304), and a tag is sent only with the record.
func pathETag(t *testing.T, x *matrix, c mcaller) {
	for _, coll := range matrixCollections() {
		for _, rec := range matrixRecords[coll] {
			st, _, hdr := x.get(t, c, "GET", "/api/v1/"+coll+"/"+x.id(coll, rec), nil,
				map[string]string{"If-None-Match": x.etags[coll+"/"+rec]})
			switch {
			case c.mayView(coll, rec) && st != http.StatusNotModified && st != http.StatusOK:
				t.Errorf("%s: conditional GET of %s/%s: %d", c.name, coll, rec, st)
			case !c.mayView(coll, rec) && (st == http.StatusNotModified || hdr.Get("ETag") != ""):
				t.Errorf("LEAK %s via etag: %s/%s answered %d with ETag %q", c.name, coll, rec, st, hdr.Get("ETag"))
			}
		}
	}
}

// pathOpenAPI: the OpenAPI document (public) names collections and their
// fields, never values. A caller learns the schema of a collection only
// when it could reach it: admins every one, a token what its scopes reach,
// a user those with a rule that is not admin-only, an anonymous caller
// those with a rule open to everyone; hidden fields only when the caller
// reads them (an admin, or a token reaching the collection).
func pathOpenAPI(t *testing.T, x *matrix, c mcaller) {
	st, body, _ := x.get(t, c, "GET", "/api/v1/openapi.json", nil, nil)
	if st != http.StatusOK {
		t.Fatalf("%s: openapi.json: %d %s", c.name, st, body)
	}
	x.leaks(t, c, "openapi.json", body)
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	// The fixture's rules (matrixSchema): vault is admin-only; owned's
	// only rule is a filter on the signed-in user.
	mayKnow := func(coll string) bool {
		switch c.kind {
		case kindAdmin:
			return true
		case kindToken:
			return c.reaches(coll)
		case kindUser:
			return coll != "vault"
		}
		return coll != "vault" && coll != "owned"
	}
	for _, coll := range matrixCollections() {
		rec, shown := doc.Components.Schemas["record_"+coll]
		if shown != mayKnow(coll) {
			t.Errorf("%s: schema of %s shown %v, want %v", c.name, coll, shown, mayKnow(coll))
		}
		for _, h := range hiddenFields[coll] {
			if _, named := rec.Properties[h]; named && !(c.kind == kindAdmin || c.full(coll)) {
				t.Errorf("LEAK %s via openapi: hidden field %s.%s named", c.name, coll, h)
			}
		}
		if strings.Contains(string(body), `"id of a record of collection vault"`) && !mayKnow("vault") {
			t.Errorf("LEAK %s via openapi: a relation names vault", c.name)
		}
	}
}
