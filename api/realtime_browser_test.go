package api_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"svcd/api/apitest"
)

// The browser test opens a page in a real headless Chromium, driven over
// the DevTools protocol by chromedp. The page subscribes to the same
// collection through EventSource and through WebSocket; the test writes
// records through the API and reads what the page received.
//
// The page is served from the node's own origin: a test-only front server
// answers the page at /browser/ and proxies every other path (the API, the
// SSE stream, the WebSocket upgrade) to the node with the browser's Host, so
// no production route is added and no CORS is involved. The front server
// also lets the test cut the SSE stream to see EventSource resume with
// Last-Event-ID.

// browserPage records, in window.st, what each transport received.
const browserPage = `<!doctype html>
<meta charset="utf-8">
<title>svcd realtime</title>
<script>
const st = {sse: [], ws: [], sseOpens: 0, sseSubscribed: 0, wsSubscribed: 0, errors: []};
window.st = st;
const kinds = ["create", "update", "delete"];
const summary = (m) => ({
  type: m.type, eventId: m.eventId, collection: m.collection,
  id: m.record ? m.record.id : m.id, title: m.record ? m.record.title : "",
});

const es = new EventSource("/api/v1/realtime?topics=posts");
es.onopen = () => { st.sseOpens++; };
es.addEventListener("subscribed", () => { st.sseSubscribed++; });
for (const k of kinds) {
  es.addEventListener(k, (e) => {
    const m = JSON.parse(e.data);
    st.sse.push(Object.assign(summary(m), {lastEventId: e.lastEventId}));
  });
}
// A server "error" frame carries data; a dropped connection does not.
es.addEventListener("error", (e) => { if (e.data) st.errors.push("sse: " + e.data); });

const ws = new WebSocket("ws://" + location.host + "/realtime");
ws.onopen = () => ws.send(JSON.stringify({type: "subscribe", topics: ["posts"]}));
ws.onmessage = (e) => {
  const m = JSON.parse(e.data);
  if (m.type === "subscribed") st.wsSubscribed++;
  else if (kinds.includes(m.type)) st.ws.push(summary(m));
  else if (m.type !== "connected") st.errors.push("ws: " + e.data);
};
ws.onclose = (e) => { st.errors.push("ws closed: " + e.code + " " + e.reason); };
</script>
<p>svcd realtime browser test</p>
`

type browserEvent struct {
	Type        string `json:"type"`
	EventID     string `json:"eventId"`
	Collection  string `json:"collection"`
	ID          string `json:"id"`
	Title       string `json:"title"`
	LastEventID string `json:"lastEventId,omitempty"`
}

type browserState struct {
	SSE           []browserEvent `json:"sse"`
	WS            []browserEvent `json:"ws"`
	SSEOpens      int            `json:"sseOpens"`
	SSESubscribed int            `json:"sseSubscribed"`
	WSSubscribed  int            `json:"wsSubscribed"`
	Errors        []string       `json:"errors"`
}

// findChromium returns the browser's path, or skips (fails under CI=1)
// when there is none.
func findChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "no headless browser: install Debian's chromium (apt-get install -y chromium)"
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// frontServer serves the page and proxies the rest to the node, keeping the
// browser's Host so that the node sees a same-origin request. It records
// the Last-Event-ID of each SSE request and can cut the open SSE streams.
type frontServer struct {
	*httptest.Server
	mu       sync.Mutex
	cuts     []context.CancelFunc
	lastIDs  []string    // Last-Event-ID of each GET /api/v1/realtime
	openedAt []time.Time // when each of them arrived
}

func startFront(t *testing.T, node *apitest.Server) *frontServer {
	t.Helper()
	target, err := url.Parse(node.URL)
	if err != nil {
		t.Fatal(err)
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Host = pr.In.Host
		},
		// A cut stream is a copy error; it is expected here.
		ErrorLog: log.New(io.Discard, "", 0),
	}
	fs := &frontServer{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /browser/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, browserPage)
	})
	mux.HandleFunc("GET /api/v1/realtime", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		fs.mu.Lock()
		fs.cuts = append(fs.cuts, cancel)
		fs.lastIDs = append(fs.lastIDs, r.Header.Get("Last-Event-ID"))
		fs.openedAt = append(fs.openedAt, time.Now())
		fs.mu.Unlock()
		rp.ServeHTTP(w, r.WithContext(ctx))
	})
	mux.Handle("/", rp)
	fs.Server = httptest.NewServer(mux)
	t.Cleanup(func() {
		fs.cut()
		fs.Close()
	})
	return fs
}

// cut ends every SSE stream open through the front server.
func (fs *frontServer) cut() {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for _, c := range fs.cuts {
		c()
	}
	fs.cuts = nil
}

func (fs *frontServer) sseRequests() ([]string, []time.Time) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return append([]string(nil), fs.lastIDs...), append([]time.Time(nil), fs.openedAt...)
}

// startBrowser starts headless Chromium and returns a context for one tab.
func startBrowser(t *testing.T) context.Context {
	t.Helper()
	path := findChromium(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.Flag("headless", "new"),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-quic", true),
	)
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancel()
		acancel()
	})
	// The first Run starts the browser; it must not carry a timeout.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start %s: %v", path, err)
	}
	return ctx
}

func pageState(t *testing.T, ctx context.Context) browserState {
	t.Helper()
	ectx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	st, err := chromedp.Run(ectx, chromedp.Evaluate[browserState](`window.st`))
	if err != nil {
		t.Fatalf("read page state: %v", err)
	}
	return st
}

// waitPage polls the JavaScript condition in the page and fails with the
// page's state when it does not hold within 10 s.
func waitPage(t *testing.T, ctx context.Context, cond string) {
	t.Helper()
	pctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	_, err := chromedp.Run(pctx, chromedp.Poll[bool](cond,
		chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(10*time.Second)))
	if err != nil {
		t.Fatalf("page: waiting for %s: %v; state %+v", cond, err, pageState(t, ctx))
	}
}

// checkOrdered fails unless ids strictly increase as (index, n) pairs.
func checkOrdered(t *testing.T, evs []browserEvent) {
	t.Helper()
	key := func(id string) [2]int64 {
		idx, n, _ := strings.Cut(id, ".")
		a, err1 := strconv.ParseInt(idx, 10, 64)
		b, err2 := int64(0), error(nil)
		if n != "" {
			b, err2 = strconv.ParseInt(n, 10, 64)
		}
		if err1 != nil || err2 != nil {
			t.Fatalf("bad event id %q", id)
		}
		return [2]int64{a, b}
	}
	for i := 1; i < len(evs); i++ {
		p, c := key(evs[i-1].EventID), key(evs[i].EventID)
		if c[0] < p[0] || (c[0] == p[0] && c[1] <= p[1]) {
			t.Fatalf("ids not increasing: %q then %q", evs[i-1].EventID, evs[i].EventID)
		}
	}
}

func TestRealtimeBrowser(t *testing.T) {
	t.Parallel()
	bctx := startBrowser(t)
	s := rtServer(t)
	front := startFront(t, s)

	nctx, ncancel := context.WithTimeout(bctx, 10*time.Second)
	defer ncancel()
	if err := chromedp.Do(nctx, chromedp.Navigate(front.URL+"/browser/")); err != nil {
		t.Fatalf("open page: %v", err)
	}
	waitPage(t, bctx, `st.sseSubscribed === 1 && st.wsSubscribed === 1`)

	// Writes through the API: three creates, an update, a delete, and a
	// record of a collection the page did not subscribe to.
	var want []string
	var ids []string
	for i := range 3 {
		title := fmt.Sprintf("b%d", i)
		rec := s.CreateRecord(t, "posts", map[string]any{"title": title})
		ids = append(ids, rec["id"].(string))
		want = append(want, "create:"+rec["id"].(string)+":"+title)
	}
	s.CreateRecord(t, "locked", map[string]any{"title": "not subscribed"})
	s.MustAdmin(t, http.StatusOK, http.MethodPatch, "/api/v1/posts/"+ids[0], map[string]any{"title": "b0 edited"})
	want = append(want, "update:"+ids[0]+":b0 edited")
	s.MustAdmin(t, http.StatusNoContent, http.MethodDelete, "/api/v1/posts/"+ids[1], nil)
	want = append(want, "delete:"+ids[1]+":")

	sum := func(evs []browserEvent) []string {
		var out []string
		for _, e := range evs {
			out = append(out, e.Type+":"+e.ID+":"+e.Title)
		}
		return out
	}
	eventIDs := func(evs []browserEvent) []string {
		var out []string
		for _, e := range evs {
			out = append(out, e.EventID)
		}
		return out
	}
	waitPage(t, bctx, fmt.Sprintf(`st.sse.length >= %d && st.ws.length >= %d`, len(want), len(want)))
	st := pageState(t, bctx)
	if len(st.Errors) > 0 {
		t.Fatalf("page errors: %v", st.Errors)
	}
	if got := sum(st.SSE); !reflect.DeepEqual(got, want) {
		t.Fatalf("EventSource got %v, want %v", got, want)
	}
	if got := sum(st.WS); !reflect.DeepEqual(got, want) {
		t.Fatalf("WebSocket got %v, want %v", got, want)
	}
	if a, b := eventIDs(st.SSE), eventIDs(st.WS); !reflect.DeepEqual(a, b) {
		t.Fatalf("event ids differ: EventSource %v, WebSocket %v", a, b)
	}
	checkOrdered(t, st.SSE)
	for _, e := range st.SSE {
		if e.LastEventID != e.EventID || e.Collection != "posts" {
			t.Fatalf("EventSource event %+v: SSE id %q, want the eventId and collection posts", e, e.LastEventID)
		}
	}

	t.Run("EventSource resumes with Last-Event-ID", func(t *testing.T) {
		// Cut the stream, write while the browser waits to retry (3 s by
		// default in Chromium), and see it resume without gaps.
		lastSeen := st.SSE[len(st.SSE)-1].EventID
		front.cut()
		wrote := time.Now()
		for i := range 2 {
			title := fmt.Sprintf("gap%d", i)
			rec := s.CreateRecord(t, "posts", map[string]any{"title": title})
			want = append(want, "create:"+rec["id"].(string)+":"+title)
		}
		written := time.Now()
		waitPage(t, bctx, fmt.Sprintf(`st.sseOpens >= 2 && st.sse.length >= %d && st.ws.length >= %d`, len(want), len(want)))
		st := pageState(t, bctx)
		if len(st.Errors) > 0 {
			t.Fatalf("page errors: %v", st.Errors)
		}
		if got := sum(st.SSE); !reflect.DeepEqual(got, want) {
			t.Fatalf("EventSource after the reconnect got %v, want %v", got, want)
		}
		if a, b := eventIDs(st.SSE), eventIDs(st.WS); !reflect.DeepEqual(a, b) {
			t.Fatalf("event ids differ: EventSource %v, WebSocket %v", a, b)
		}
		checkOrdered(t, st.SSE)
		lastIDs, opened := front.sseRequests()
		if len(lastIDs) != 2 || lastIDs[0] != "" || lastIDs[1] != lastSeen {
			t.Fatalf("SSE requests carried Last-Event-ID %q, want [\"\" %q]", lastIDs, lastSeen)
		}
		// The writes must have been missed, not received live.
		if !opened[1].After(written) {
			t.Fatalf("the browser reconnected %v after the cut, before the writes ended (%v): nothing was replayed",
				opened[1].Sub(wrote), written.Sub(wrote))
		}
		t.Logf("resumed %v after the cut", opened[1].Sub(wrote).Round(time.Millisecond))
	})
}
