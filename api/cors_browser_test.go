package api_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The cross-origin browser test serves a page from a second loopback
// server (another port: another origin) that opens two EventSources on the
// node, one withCredentials, and writes a record with fetch (a JSON POST:
// preflighted), in a real headless Chromium. The helpers (startBrowser,
// waitPage) are those of realtime_browser_test.go.

// corsPage reports in window.cst what each EventSource and the fetch got.
const corsPage = `<!doctype html>
<meta charset="utf-8">
<title>svcd cors</title>
<script>
const node = new URLSearchParams(location.search).get("node");
const cst = {plain: [], cred: [], subscribed: 0, failed: [], write: null};
window.cst = cst;
for (const [name, withCredentials] of [["plain", false], ["cred", true]]) {
  const es = new EventSource(node + "/api/v1/realtime?topics=posts", {withCredentials});
  es.addEventListener("subscribed", () => { cst.subscribed++; });
  es.addEventListener("create", (e) => { cst[name].push(JSON.parse(e.data).record.title); });
  // A CORS failure closes the EventSource for good.
  es.onerror = () => { if (es.readyState === EventSource.CLOSED) { cst.failed.push(name); } };
}
window.write = (title) => {
  // A URL of its own per write: Chromium caches a granted preflight
  // (Access-Control-Max-Age) per URL, and would skip the refused one.
  fetch(node + "/api/v1/posts?w=" + encodeURIComponent(title), {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify({title})})
    .then((r) => { cst.write = {status: r.status, index: r.headers.get("X-Svc-Index") || "", etag: r.headers.get("ETag") || ""}; })
    .catch((e) => { cst.write = {error: String(e)}; });
};
</script>
`

type corsWrite struct {
	Status int    `json:"status"`
	Index  string `json:"index"`
	ETag   string `json:"etag"`
	Error  string `json:"error"`
}

type corsState struct {
	Plain      []string   `json:"plain"`
	Cred       []string   `json:"cred"`
	Subscribed int        `json:"subscribed"`
	Failed     []string   `json:"failed"`
	Write      *corsWrite `json:"write"`
}

func corsPageState(t *testing.T, ctx context.Context) corsState {
	t.Helper()
	ectx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	st, err := chromedp.Run(ectx, chromedp.Evaluate[corsState](`window.cst`))
	if err != nil {
		t.Fatalf("read page state: %v", err)
	}
	return st
}

func TestCORSBrowser(t *testing.T) {
	t.Parallel()
	bctx := startBrowser(t)
	s := rtServer(t)
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, corsPage)
	}))
	t.Cleanup(page.Close)
	open := func(t *testing.T) {
		t.Helper()
		nctx, cancel := context.WithTimeout(bctx, 10*time.Second)
		defer cancel()
		if err := chromedp.Do(nctx, chromedp.Navigate(page.URL+"/?node="+url.QueryEscape(s.URL))); err != nil {
			t.Fatalf("open page: %v", err)
		}
	}
	write := func(t *testing.T, title string) corsWrite {
		t.Helper()
		ectx, cancel := context.WithTimeout(bctx, 5*time.Second)
		defer cancel()
		if _, err := chromedp.Run(ectx, chromedp.Evaluate[any](fmt.Sprintf("write(%q)", title))); err != nil {
			t.Fatal(err)
		}
		waitPage(t, bctx, `window.cst.write !== null`)
		return *corsPageState(t, bctx).Write
	}

	t.Run("listed origin with credentials", func(t *testing.T) {
		setCORS(t, s, map[string]any{"cors.origins": page.URL, "cors.credentials": true})
		open(t)
		waitPage(t, bctx, `window.cst.subscribed === 2`)
		w := write(t, "cross-origin")
		if w.Status != http.StatusCreated || w.Index == "" || w.ETag == "" {
			t.Fatalf("fetch from the page: %+v (status 201 with X-Svc-Index and ETag readable)", w)
		}
		waitPage(t, bctx, `window.cst.plain.length === 1 && window.cst.cred.length === 1`)
		if st := corsPageState(t, bctx); st.Plain[0] != "cross-origin" || st.Cred[0] != "cross-origin" || len(st.Failed) > 0 {
			t.Fatalf("page state %+v", st)
		}
	})

	t.Run("* without credentials refuses withCredentials", func(t *testing.T) {
		setCORS(t, s, map[string]any{"cors.origins": "*", "cors.credentials": false})
		open(t)
		waitPage(t, bctx, `window.cst.subscribed === 1 && window.cst.failed.length === 1`)
		if st := corsPageState(t, bctx); st.Failed[0] != "cred" {
			t.Fatalf("page state %+v: only the credentialed EventSource should fail", st)
		}
		if w := write(t, "wildcard"); w.Status != http.StatusCreated || w.Index == "" {
			t.Fatalf("fetch from the page: %+v", w)
		}
		waitPage(t, bctx, `window.cst.plain.length === 1`)
	})

	t.Run("unlisted origin", func(t *testing.T) {
		setCORS(t, s, map[string]any{"cors.origins": "https://elsewhere.example"})
		open(t)
		waitPage(t, bctx, `window.cst.failed.length === 2`)
		if w := write(t, "refused"); w.Error == "" {
			t.Fatalf("fetch from an unlisted origin succeeded: %+v", w)
		}
		if ids := listIDs(t, s, "/api/v1/posts?filter="+url.QueryEscape(`title="refused"`)); len(ids) != 0 {
			t.Fatalf("the refused preflight let the write through: %v", ids)
		}
	})
}
