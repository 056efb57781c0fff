package stack_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oauth2-proxy/mockoidc"

	"svcd/api/apitest"
	"svcd/cmd/svcd/stack"
	"svcd/engine"
	"svcd/engine/auth"
)

// TestOAuth2Replay drives the OAuth2 commands (authorize, spending a
// state, the exchange's outcome, merge-confirm, unlink) through a real
// node and a real local OpenID provider with a seeded random mix, part of
// it concurrent: identities with verified and unverified emails, some
// matching accounts, PKCE of both kinds, wrong and spent states, replayed
// codes, merges with right and wrong passwords, links from a session,
// unlinks and account deletions. The node's Raft log is then replayed
// into two fresh replicas, which must end identical to the node: every
// outcome is decided from what the commands carry and the database.
//
// SVCD_DET_SEED=<n> reruns another sequence.
func TestOAuth2Replay(t *testing.T) {
	seed := detSeed(t, 20261201)
	dir := t.TempDir()
	node := replOpen(t, stack.Config{DataDir: dir})
	w := newOAuthWorkload(t, node)
	w.run(rand.New(rand.NewPCG(seed, 0)), 120)
	var wg sync.WaitGroup
	for g := 1; g <= 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			w.run(rand.New(rand.NewPCG(seed, uint64(g))), 40)
		}(g)
	}
	wg.Wait()
	t.Logf("workload: %s", w.summary())
	for _, msg := range w.unexpected {
		t.Errorf("unexpected error: %s", msg)
	}
	for _, o := range []string{"created", "signin", "merge", "conflict", "linked", "merged", "wrong password", "bad state", "refused code", "unlinked"} {
		if w.kinds[o] == 0 {
			t.Errorf("no %q outcome: the workload does not cover what it should", o)
		}
	}
	node.close(t)
	rep := replayCheck(t, dir, seed, 48, w.outcomes)
	for _, tbl := range []string{"table:_svc_oauth2_states", "table:_svc_oauth2_links", "table:_svc_oauth2_merges"} {
		if _, ok := rep.digest[tbl]; !ok {
			t.Errorf("the digest does not cover %s", tbl)
		}
	}
}

const oauthRedirect = "https://app.example.com/cb"

type oauthWorkload struct {
	t    *testing.T
	eng  *engine.Engine
	oa   *auth.OAuth2
	auth *auth.Auth
	m    *mockoidc.MockOIDC
	ctx  context.Context

	mu         sync.Mutex
	sessions   []string          // user session tokens
	merges     []string          // merge tokens not yet spent (as far as the workload knows)
	spent      map[string]string // codes already exchanged -> their state
	outcomes   map[uint64]detOutcome
	kinds      map[string]int
	unexpected []string
}

func newOAuthWorkload(t *testing.T, node *replNode) *oauthWorkload {
	m := apitest.RunMockOIDC(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	w := &oauthWorkload{t: t, eng: node.Engine, oa: node.Auth.OAuth2(), auth: node.Auth, m: m, ctx: ctx,
		spent: map[string]string{}, outcomes: map[uint64]detOutcome{}, kinds: map[string]int{}}
	if _, _, err := w.eng.Schema().CreateCollection(ctx, []byte(`{"name":"members","type":"auth","create_rule":"",
		"fields":[{"name":"name","type":"text"}],"view_rule":"id = @request.auth.id"}`)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := w.eng.PatchSettings(ctx, []byte(fmt.Sprintf(`{"hooks.http.allow":"127.0.0.1","oauth2.oidc.enabled":"1",
		"oauth2.oidc.client_id":%q,"oauth2.oidc.client_secret":%q,"oauth2.oidc.issuer":%q}`, m.ClientID, m.ClientSecret, m.Issuer()))); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		email := fmt.Sprintf("acct%d@example.com", i)
		if _, _, err := w.auth.Register(ctx, engine.Principal{}, "members", []byte(`{"email":"`+email+`","password":"`+flowPassword+`"}`)); err != nil {
			t.Fatal(err)
		}
		s, err := w.auth.LoginUser(ctx, "members", email, flowPassword, "10.0.0.7")
		if err != nil {
			t.Fatal(err)
		}
		w.sessions = append(w.sessions, s.Token)
	}
	return w
}

// identity is one of a small pool, so identities come back: some with
// the verified email of an account, some with an unverified one, some
// with an email nobody has.
func identity(r *rand.Rand) *mockoidc.MockUser {
	i := r.IntN(12)
	u := &mockoidc.MockUser{Subject: fmt.Sprintf("sub-%d", i), EmailVerified: i%3 != 0}
	switch {
	case i < 6:
		u.Email = fmt.Sprintf("acct%d@example.com", i%4)
	case i < 10:
		u.Email = fmt.Sprintf("new%d@example.com", i)
	}
	return u
}

func (w *oauthWorkload) run(r *rand.Rand, n int) {
	for range n {
		if w.t.Failed() {
			return
		}
		w.step(r)
	}
}

func (w *oauthWorkload) step(r *rand.Rand) {
	switch op := r.IntN(12); {
	case op <= 5:
		w.signIn(r, "")
	case op <= 7:
		if tok := w.pickSession(r); tok != "" {
			w.signIn(r, tok)
		}
	case op == 8:
		w.mu.Lock()
		if len(w.merges) == 0 {
			w.mu.Unlock()
			return
		}
		tok := w.merges[r.IntN(len(w.merges))]
		w.mu.Unlock()
		pw := flowPassword
		if r.IntN(3) == 0 {
			pw = "wrong-password-1"
		}
		s, idx, err := w.oa.MergeConfirm(w.ctx, engine.Principal{}, "members", auth.MergeRequest{MergeToken: tok, Password: pw}, "10.0.0.7")
		switch {
		case err == nil:
			w.note("merged", idx, nil)
			w.keep(s)
		case pw != flowPassword && isErr(err, auth.ErrInvalidCreds):
			w.note("wrong password", idx, nil)
		default:
			w.note("merge refused", 0, err)
		}
	case op <= 10:
		tok := w.pickSession(r)
		p, err := w.auth.Authenticate(w.ctx, tok)
		if tok == "" || err != nil {
			return
		}
		idx, err := w.oa.Unlink(w.ctx, p, "members", "oidc")
		if err == nil {
			w.note("unlinked", idx, nil)
		} else {
			w.note("unlink refused", idx, nil)
		}
	case op == 11 && r.IntN(3) == 0:
		tok := w.pickSession(r)
		p, err := w.auth.Authenticate(w.ctx, tok)
		if tok == "" || err != nil {
			return
		}
		idx, err := w.eng.Records().DeleteRecord(w.ctx, engine.Principal{Kind: engine.AdminPrincipal, ID: "adm_test", Role: engine.RoleOwner}, "members", p.ID, "")
		w.note("account deleted", idx, err)
	}
}

// signIn runs one exchange, from a session tok when set.
func (w *oauthWorkload) signIn(r *rand.Rand, tok string) {
	var p engine.Principal
	if tok != "" {
		var err error
		if p, err = w.auth.Authenticate(w.ctx, tok); err != nil {
			return
		}
	}
	w.m.QueueUser(identity(r))
	in := auth.AuthorizeRequest{Provider: "oidc", RedirectURI: oauthRedirect}
	verifier := ""
	switch r.IntN(3) {
	case 0:
		in.UsePKCE = true
	case 1:
		verifier = strings.Repeat(string(rune('a'+r.IntN(26))), 48)
		sum := sha256.Sum256([]byte(verifier))
		in.CodeChallenge = base64.RawURLEncoding.EncodeToString(sum[:])
	}
	a, idx, err := w.oa.Authorize(w.ctx, "members", in)
	w.note("authorize", idx, err)
	if err != nil {
		return
	}
	code, state := w.visit(a.AuthorizeURL)
	if code == "" {
		return
	}
	ex := auth.ExchangeRequest{Provider: "oidc", Code: code, RedirectURI: oauthRedirect, State: state, CodeVerifier: verifier}
	switch r.IntN(8) {
	case 0:
		ex.State = "forged-" + state
	case 1:
		w.mu.Lock()
		for c := range w.spent {
			ex.Code, ex.State = c, "" // a code used before, without a state
			break
		}
		w.mu.Unlock()
	}
	res, idx, err := w.oa.Exchange(w.ctx, p, "members", ex)
	if ex.State == state && ex.Code == code {
		w.mu.Lock()
		w.spent[code] = state
		w.mu.Unlock()
	}
	de := engine.AsError(err)
	switch {
	case err == nil && res.MergeRequired:
		w.note("merge", idx, nil)
		w.mu.Lock()
		w.merges = append(w.merges, res.MergeToken)
		w.mu.Unlock()
	case err == nil && tok != "" && !res.Meta.IsNew:
		w.note("linked", idx, nil)
	case err == nil && res.Meta.IsNew:
		w.note("created", idx, nil)
		w.keep(res)
	case err == nil:
		w.note("signin", idx, nil)
		w.keep(res)
	case de != nil && de.Message == "Invalid or expired OAuth2 state":
		w.note("bad state", idx, nil)
	case de != nil && de.Message == "The OAuth2 provider refused the code":
		w.note("refused code", idx, nil)
	case de != nil && de.Kind == engine.KindConflict && strings.Contains(de.Message, "does not say the email is verified"):
		w.note("conflict", idx, nil)
	case de != nil && de.Kind == engine.KindConflict:
		w.note("link refused", idx, nil)
	case de != nil && (de.Kind == engine.KindValidation || de.Kind == engine.KindUnauthorized):
		w.note("refused", 0, err) // a guest, an account deleted meanwhile
	default:
		w.note("exchange", idx, err)
	}
}

// visit plays the browser at the provider.
func (w *oauthWorkload) visit(u string) (code, state string) {
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Get(u)
	if err != nil {
		w.fail("visit: %v", err)
		return "", ""
	}
	res.Body.Close()
	loc, err := url.Parse(res.Header.Get("Location"))
	if err != nil || res.StatusCode != http.StatusFound {
		w.fail("visit: %d %q", res.StatusCode, res.Header.Get("Location"))
		return "", ""
	}
	return loc.Query().Get("code"), loc.Query().Get("state")
}

// keep remembers the session of a sign-in.
func (w *oauthWorkload) keep(res *auth.OAuth2Result) {
	if res == nil || res.UserSession == nil || res.Token == "" {
		return
	}
	w.mu.Lock()
	w.sessions = append(w.sessions, res.Token)
	w.mu.Unlock()
}

func (w *oauthWorkload) pickSession(r *rand.Rand) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.sessions) == 0 {
		return ""
	}
	return w.sessions[r.IntN(len(w.sessions))]
}

// note records one operation: every OAuth2 command commits its outcome
// (an error for the caller is the proposer's reading of it), so each
// logged one must replay as "ok"; an account delete replays as it was.
func (w *oauthWorkload) note(op string, idx uint64, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.kinds[op]++
	if err != nil {
		if de := engine.AsError(err); de == nil || de.Kind == engine.KindInternal || de.Kind == engine.KindUnavailable || op == "exchange" || op == "authorize" {
			w.unexpected = append(w.unexpected, fmt.Sprintf("%s (index %d): %v", op, idx, err))
		}
	}
	if idx == 0 {
		return
	}
	w.outcomes[idx] = detOutcome{op: op, result: replOutcome(err)}
}

func (w *oauthWorkload) fail(format string, args ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.unexpected = append(w.unexpected, fmt.Sprintf(format, args...))
}

func (w *oauthWorkload) summary() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var parts []string
	for k, v := range w.kinds {
		parts = append(parts, fmt.Sprintf("%s=%d", k, v))
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

func isErr(err error, want *engine.Error) bool {
	de := engine.AsError(err)
	return de != nil && de.Kind == want.Kind && de.Message == want.Message
}
