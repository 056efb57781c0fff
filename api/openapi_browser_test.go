package api_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"svcd/api/apitest"
)

// TestOpenAPIDocsBrowser opens /api/v1/docs in headless Chromium: the page
// renders the node's document (title, a collection's operations) with its
// embedded assets under its Content-Security-Policy, and logs no console
// error or warning, no exception and no CSP violation.
func TestOpenAPIDocsBrowser(t *testing.T) {
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, coll("posts", "base", []map[string]any{f("title", "text")}, "view_rule", ""))
	ctx := startBrowser(t)

	var mu sync.Mutex
	var problems []string
	cctx, stop := context.WithCancel(ctx)
	defer stop()
	// Console subscribes when called (before the page opens); the
	// goroutine drains it.
	msgs := chromedp.Console(cctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleWarning || m.IsException() {
				mu.Lock()
				problems = append(problems, m.String()+" ("+m.URL+")")
				mu.Unlock()
			}
		}
	}()

	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(rctx,
		chromedp.Navigate(s.URL+"/api/v1/docs"),
		chromedp.WaitVisible(chromedp.CSS("details.op")),
	); err != nil {
		t.Fatalf("open the docs page: %v", err)
	}
	title, err := chromedp.Run(rctx, chromedp.Text(chromedp.CSS("#title")))
	if err != nil {
		t.Fatal(err)
	}
	version, err := chromedp.Run(rctx, chromedp.Text(chromedp.CSS("#version")))
	if err != nil {
		t.Fatal(err)
	}
	if title != "svcd API" || !strings.Contains(version, "OpenAPI 3.0.3") {
		t.Errorf("title %q version %q", title, version)
	}
	opCount, err := chromedp.Run(rctx, chromedp.Evaluate[int](`document.querySelectorAll('details.op').length`))
	if err != nil {
		t.Fatal(err)
	}
	if opCount < 50 {
		t.Errorf("%d operations rendered", opCount)
	}
	postsList, err := chromedp.Run(rctx, chromedp.Evaluate[string](
		`[...document.querySelectorAll('details.op summary')].map(s => s.textContent).find(t => t.startsWith('GET') && t.endsWith('/api/v1/posts')) || ''`))
	if err != nil {
		t.Fatal(err)
	}
	if postsList == "" {
		t.Error("the list of posts is not rendered")
	}
	// Filtering hides the rest.
	if err := chromedp.Do(rctx, chromedp.SendKeys(chromedp.CSS("#search"), "/api/v1/posts")); err != nil {
		t.Fatal(err)
	}
	shown, err := chromedp.Run(rctx, chromedp.Evaluate[int](`[...document.querySelectorAll('details.op')].filter(d => !d.hidden).length`))
	if err != nil {
		t.Fatal(err)
	}
	if shown < 1 || shown >= opCount {
		t.Errorf("filter shows %d of %d operations", shown, opCount)
	}
	// Give late messages (a blocked asset, a failed fetch) a moment.
	time.Sleep(300 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if len(problems) > 0 {
		t.Errorf("the page logged problems:\n%s", strings.Join(problems, "\n"))
	}
}
