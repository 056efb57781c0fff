package api_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdpwebauthn "github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"

	"svcd/api/apitest"
)

// The passkey browser test: a page served by the test at
// http://localhost:<port> (a secure context; relying party id localhost)
// registers a passkey and signs in with it through navigator.credentials,
// in a real headless Chromium whose authenticator is the DevTools virtual
// one (WebAuthn.addVirtualAuthenticator: CTAP2.1, internal, resident keys,
// user verification). The page reaches the three nodes of a cluster
// through the test's server (/n/<i>/... goes to node i: one origin, no
// CORS), and every ceremony begins on one node and ends on another. The
// helpers (startBrowser, waitPage) are those of realtime_browser_test.go.

// passkeyPage is the page: the snippet of docs/auth.md ("Passkeys in the
// browser"), with the node of each step as an argument.
const passkeyPage = `<!doctype html>
<meta charset="utf-8">
<title>svcd passkeys</title>
<script>
async function call(node, path, body, token) {
  const headers = {"Content-Type": "application/json"};
  if (token) headers.Authorization = "Bearer " + token;
  const r = await fetch("/n/" + node + "/api/v1/auth/members/webauthn/" + path,
    {method: "POST", headers, body: JSON.stringify(body)});
  const j = await r.json();
  if (!r.ok) throw new Error(path + ": " + r.status + " " + JSON.stringify(j));
  return j.data;
}
window.registerPasskey = async (begin, finish, token, name) => {
  const {options, ticket} = await call(begin, "register/options", {}, token);
  const cred = await navigator.credentials.create({
    publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(options.publicKey)});
  return call(finish, "register/verify", {ticket, response: cred.toJSON(), name}, token);
};
window.signInWithPasskey = async (begin, finish, email) => {
  const {options, ticket} = await call(begin, "login/options", email ? {email} : {});
  const cred = await navigator.credentials.get({
    publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(options.publicKey)});
  return call(finish, "login/verify", {ticket, response: cred.toJSON()});
};
window.attempt = (p) => p.then((v) => ({ok: true, data: v}), (e) => ({ok: false, error: String(e)}));
</script>
<p>svcd passkeys browser test</p>
`

// passkeyFront serves the page and proxies /n/<i>/... to node i.
func passkeyFront(t *testing.T, nodes []*apitest.Server) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, passkeyPage)
	})
	for i, n := range nodes {
		target, err := url.Parse(n.URL)
		if err != nil {
			t.Fatal(err)
		}
		prefix := fmt.Sprintf("/n/%d", i+1)
		mux.Handle(prefix+"/", http.StripPrefix(prefix, &httputil.ReverseProxy{
			Rewrite:  func(pr *httputil.ProxyRequest) { pr.SetURL(target) },
			ErrorLog: log.New(io.Discard, "", 0),
		}))
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	_, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	return "http://localhost:" + port
}

// pageResult is what attempt() resolves to.
type pageResult struct {
	OK    bool           `json:"ok"`
	Data  map[string]any `json:"data"`
	Error string         `json:"error"`
}

func pageCall(t *testing.T, ctx context.Context, expr string) pageResult {
	t.Helper()
	ectx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	r, err := chromedp.Run(ectx, chromedp.Evaluate[pageResult]("attempt("+expr+")", chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return r
}

func TestPasskeysBrowser(t *testing.T) {
	t.Parallel()
	bctx := startBrowser(t)
	c := apitest.StartCluster(t, 3, apitest.Options{})
	admin := bearer(c.AdminToken(t))
	origin := passkeyFront(t, c.Nodes)
	leader := c.Leader(t)
	data(t, leader, 200, "PATCH", settingsURL, map[string]any{"webauthn.rp_id": "localhost", "webauthn.origins": origin}, admin)
	data(t, leader, 201, "POST", collectionsURL, members(), admin)
	c.Sync(t)
	annID := register(t, c.Nodes[1], "members", "ann@example.com", userPassword)
	ann := signIn(t, c.Nodes[1], "members", "ann@example.com", userPassword)["token"].(string)
	c.Sync(t)

	nctx, ncancel := context.WithTimeout(bctx, 10*time.Second)
	defer ncancel()
	if err := chromedp.Do(nctx, chromedp.Navigate(origin+"/")); err != nil {
		t.Fatalf("open page: %v", err)
	}
	waitPage(t, bctx, `typeof window.signInWithPasskey === "function" && window.isSecureContext`)
	authenticator, err := chromedp.Run(nctx, chromedp.Action[cdpwebauthn.AuthenticatorID](func(ctx context.Context, tg *chromedp.Target) (cdpwebauthn.AuthenticatorID, error) {
		if _, err := cdp.Call(ctx, tg, cdpwebauthn.Enable, cdpwebauthn.EnableParams{}); err != nil {
			return "", err
		}
		res, err := cdp.Call(ctx, tg, cdpwebauthn.AddVirtualAuthenticator, cdpwebauthn.AddVirtualAuthenticatorParams{Options: &cdpwebauthn.VirtualAuthenticatorOptions{
			Protocol: cdpwebauthn.AuthenticatorProtocolCtap2, Ctap2version: cdpwebauthn.Ctap2versionCtap21,
			Transport: cdpwebauthn.AuthenticatorTransportInternal, HasResidentKey: true, HasUserVerification: true,
			IsUserVerified: true, AutomaticPresenceSimulation: true,
		}})
		return res.AuthenticatorID, err
	}))
	if err != nil {
		t.Fatalf("add the virtual authenticator: %v", err)
	}

	// Register: options from node 1, verify on node 2.
	reg := pageCall(t, bctx, fmt.Sprintf(`registerPasskey(1, 2, %q, "Chromium")`, ann))
	if !reg.OK || reg.Data["name"] != "Chromium" || reg.Data["credential_id"] == "" {
		t.Fatalf("register in the browser: %+v", reg)
	}
	creds, err := chromedp.Run(nctx, chromedp.Action[[]*cdpwebauthn.Credential](func(ctx context.Context, tg *chromedp.Target) ([]*cdpwebauthn.Credential, error) {
		res, err := cdp.Call(ctx, tg, cdpwebauthn.GetCredentials, cdpwebauthn.GetCredentialsParams{AuthenticatorID: authenticator})
		return res.Credentials, err
	}))
	if err != nil || len(creds) != 1 || !creds[0].IsResidentCredential || creds[0].RpID != "localhost" || string(creds[0].UserHandle) != annID {
		t.Fatalf("the authenticator holds %+v (%v)", creds, err)
	}

	// Sign in without an email (discoverable): options from node 3,
	// verify on node 1; then by email: options from node 2, verify on 3.
	for _, step := range []struct {
		begin, finish int
		email         string
	}{{3, 1, ""}, {2, 3, "ann@example.com"}, {1, 1, ""}} {
		got := pageCall(t, bctx, fmt.Sprintf(`signInWithPasskey(%d, %d, %q)`, step.begin, step.finish, step.email))
		if !got.OK {
			t.Fatalf("sign in (options on node %d, verify on node %d, email %q): %s", step.begin, step.finish, step.email, got.Error)
		}
		rec, _ := got.Data["record"].(map[string]any)
		tok, _ := got.Data["token"].(string)
		if rec["id"] != annID || tok == "" {
			t.Fatalf("sign-in answered %+v", got.Data)
		}
		for _, n := range c.Nodes {
			data(t, n, 200, "GET", "/api/v1/auth/me", nil, bearer(tok))
		}
	}
	// Chromium's authenticator counts its signatures: each sign-in passed
	// the counter check against the one before, through another node.
	c.Sync(t)
	l := pkList(t, c.Nodes[2], "members", bearer(ann))
	if len(l) != 1 || apitest.Obj(t, l[0])["last_used"] == nil {
		t.Fatalf("list after the sign-ins: %v", l)
	}

	// Deleted through the API, the passkey signs nobody in.
	id := apitest.Obj(t, l[0])["id"].(string)
	if res, out := leader.Do(t, "DELETE", pkURL("members", "credentials/"+id), nil, bearer(ann)); res.StatusCode != 204 {
		t.Fatalf("delete: %d %s", res.StatusCode, out)
	}
	if got := pageCall(t, bctx, `signInWithPasskey(2, 3, "")`); got.OK || !strings.Contains(got.Error, "401") {
		t.Fatalf("sign-in with a deleted passkey: %+v", got)
	}
}
