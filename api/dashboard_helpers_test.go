package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/chromedp"
)

// dashPage drives the admin dashboard of one node in a headless Chromium
// tab (startBrowser, realtime_browser_test.go). Its helpers fail the test
// on any error, so a scenario reads as the steps an admin takes.
type dashPage struct {
	t    *testing.T
	ctx  context.Context
	base string
}

// openDashboard starts a browser and loads base+"/_/" in it.
func openDashboard(t *testing.T, base string) *dashPage {
	t.Helper()
	p := &dashPage{t: t, ctx: startBrowser(t), base: base}
	p.do(chromedp.EmulateViewport(1200, 800), chromedp.Navigate(base+"/_/"))
	p.watchCSP()
	return p
}

// watchCSP records the page's Content-Security-Policy violations in
// window.cspViolations (checkNamed reports them); the page is one
// document for its whole life, so one listener sees every page.
func (p *dashPage) watchCSP() {
	p.t.Helper()
	p.mustJS(`(() => { window.cspViolations = []; document.addEventListener("securitypolicyviolation",
		(e) => window.cspViolations.push(e.violatedDirective + " " + e.blockedURI)); return true; })()`)
}

// do runs steps with a 20 s limit.
func (p *dashPage) do(steps ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		p.t.Fatalf("browser: %v (page: %s)", err, p.text("document.body.innerText"))
	}
}

// js evaluates expr (JSON-able result) without failing on a page error.
func (p *dashPage) js(expr string) (any, error) {
	ctx, cancel := context.WithTimeout(p.ctx, 10*time.Second)
	defer cancel()
	return chromedp.Run(ctx, chromedp.Evaluate[any](expr, chromedp.EvalAwaitPromise))
}

// text evaluates expr to a string ("" on error).
func (p *dashPage) text(expr string) string {
	v, err := p.js("String(" + expr + ")")
	if err != nil {
		return "(" + err.Error() + ")"
	}
	s, _ := v.(string)
	return s
}

// waitFor polls the JavaScript condition cond until it holds (limit d).
func (p *dashPage) waitFor(what, cond string, d time.Duration) {
	p.t.Helper()
	deadline := time.Now().Add(d)
	for {
		if v, err := p.js("!!(" + cond + ")"); err == nil && v == true {
			return
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("browser: waited %s for %s (%s); page:\n%s", d, what, cond, p.text("document.body.innerText"))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// fill replaces the value of the control sel matches by typing text.
func (p *dashPage) fill(sel, text string) {
	p.t.Helper()
	p.mustJS(fmt.Sprintf(`(() => { const e = document.querySelector(%q); e.value = ""; return true; })()`, sel))
	if text != "" {
		p.do(chromedp.SendKeys(chromedp.CSS(sel), text))
	}
}

// choose selects value in the <select> sel matches, as a user would.
func (p *dashPage) choose(sel, value string) {
	p.t.Helper()
	p.mustJS(fmt.Sprintf(`(() => { const e = document.querySelector(%q); e.value = %q;
		e.dispatchEvent(new Event("change", {bubbles: true})); return e.value === %q; })()`, sel, value, value))
}

// press clicks the button (or link) whose visible text is label.
func (p *dashPage) press(label string) {
	p.t.Helper()
	p.waitFor("a control "+label, controlJS(label), 15*time.Second)
	p.mustJS(controlJS(label) + ".click() === undefined")
}

// controlJS finds the enabled button or link named label.
func controlJS(label string) string {
	return fmt.Sprintf(`[...document.querySelectorAll("button, a")].find((e) => !e.disabled && e.textContent.trim() === %q)`, label)
}

// hasControl reports whether a button or link named label is on the page.
func (p *dashPage) hasControl(label string) bool {
	v, err := p.js("!!" + controlJS(label))
	return err == nil && v == true
}

// mustJS evaluates expr and fails unless it is true.
func (p *dashPage) mustJS(expr string) {
	p.t.Helper()
	v, err := p.js(expr)
	if err != nil || v != true {
		p.t.Fatalf("browser: %s = %v, %v", expr, v, err)
	}
}

// goTo navigates inside the page (the app's router, no reload).
func (p *dashPage) goTo(path string) {
	p.t.Helper()
	p.mustJS(fmt.Sprintf("window.svcdGo(%q) === undefined", path))
}

// signIn fills the sign-in (or first-admin setup) form.
func (p *dashPage) signIn(email, password string) {
	p.t.Helper()
	p.waitFor("the sign-in form", `document.querySelector("input[name=email]")`, 15*time.Second)
	p.fill("input[name=email]", email)
	p.fill("input[name=password]", password)
	p.mustJS(`document.querySelector("form button[type=submit]").click() === undefined`)
	p.waitFor("the signed-in header", `document.getElementById("role")`, 15*time.Second)
}

// unnamedControls reads the browser's accessibility tree and returns the
// interactive nodes (buttons, links, text boxes, ...) that have no name.
func (p *dashPage) unnamedControls() []string {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 10*time.Second)
	defer cancel()
	res, err := chromedp.Call(ctx, accessibility.GetFullAXTree, accessibility.GetFullAXTreeParams{})
	if err != nil {
		p.t.Fatalf("Accessibility.getFullAXTree: %v", err)
	}
	interactive := map[string]bool{"button": true, "link": true, "textbox": true, "searchbox": true, "combobox": true,
		"checkbox": true, "spinbutton": true, "listbox": true, "radio": true, "slider": true, "switch": true, "menuitem": true}
	var bad []string
	controls := 0
	for _, n := range res.Nodes {
		if n.Ignored || n.Role == nil {
			continue
		}
		role := axString(n.Role.Value)
		if !interactive[role] {
			continue
		}
		controls++
		if n.Name == nil || strings.TrimSpace(axString(n.Name.Value)) == "" {
			bad = append(bad, fmt.Sprintf("%s (backend node %d)", role, n.BackendDOMNodeID))
		}
	}
	if controls == 0 {
		p.t.Fatalf("the accessibility tree has no controls at all")
	}
	return bad
}

func axString(v []byte) string {
	var s string
	if json.Unmarshal(v, &s) != nil {
		return string(v)
	}
	return s
}

// checkNamed fails when a control of the current page has no accessible
// name, and when one cannot be reached with the Tab key.
func (p *dashPage) checkNamed(page string) {
	p.t.Helper()
	if bad := p.unnamedControls(); len(bad) > 0 {
		p.t.Errorf("%s: controls without an accessible name: %v", page, bad)
	}
	// Reachable by keyboard: native controls, none taken out of the tab
	// order.
	if v := p.text(`[...document.querySelectorAll("[tabindex]")].filter((e) => e.tabIndex < 0 && e.id !== "main").map((e) => e.outerHTML.slice(0, 80)).join(" | ")`); v != "" {
		p.t.Errorf("%s: controls out of the tab order: %s", page, v)
	}
	if v := p.text(`[...document.querySelectorAll("[onclick], div[role=button], span[role=button]")].length`); v != "0" {
		p.t.Errorf("%s: %s clickable non-controls", page, v)
	}
	p.checkTabOrder(page)
	if v := p.text(`window.cspViolations.join(" | ")`); v != "" {
		p.t.Errorf("%s: Content-Security-Policy violations: %s", page, v)
	}
}

// checkTabOrder presses Tab through the page (real key events) and fails
// when an enabled, visible control never receives the focus.
func (p *dashPage) checkTabOrder(page string) {
	p.t.Helper()
	const controls = `[...document.querySelectorAll("a[href], button, input, select, textarea")].filter((e) => !e.disabled && e.checkVisibility())`
	n, err := p.js(controls + `.length`)
	if err != nil {
		p.t.Fatal(err)
	}
	p.mustJS(`(() => { document.querySelectorAll("[data-tabbed]").forEach((e) => e.removeAttribute("data-tabbed"));
		document.activeElement && document.activeElement.blur(); return true; })()`)
	// A date or time input takes a Tab stop per part (day, month, year,
	// hours, ...): up to eight more each.
	dates, err := p.js(`document.querySelectorAll("input[type=date], input[type=time], input[type=datetime-local]").length`)
	if err != nil {
		p.t.Fatal(err)
	}
	for i := 0; i < int(n.(float64))+8*int(dates.(float64))+3; i++ {
		p.do(chromedp.KeyEvent("\t"))
		p.mustJS(`(() => { const e = document.activeElement; if (e && e !== document.body) e.setAttribute("data-tabbed", ""); return true; })()`)
	}
	if v := p.text(controls + `.filter((e) => !e.hasAttribute("data-tabbed")).map((e) => e.outerHTML.slice(0, 80)).join(" | ")`); v != "" {
		p.t.Errorf("%s: not reachable with Tab: %s", page, v)
	}
}

// shot saves a PNG of the viewport as docs/<name>.png when
// SVC_DASHBOARD_SCREENSHOTS names the docs directory (make screenshots).
func (p *dashPage) shot(name string) {
	p.t.Helper()
	dir := os.Getenv("SVC_DASHBOARD_SCREENSHOTS")
	if dir == "" {
		return
	}
	ctx, cancel := context.WithTimeout(p.ctx, 10*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		p.t.Fatalf("screenshot: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		p.t.Fatal(err)
	}
}
