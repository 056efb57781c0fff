package stack_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"svcd/cmd/svcd/stack"
	"svcd/engine"
	"svcd/engine/auth"
	"svcd/engine/token"
	"svcd/engine/totp"
)

// TestAuthFlowsReplay drives the auth-flow commands (password reset,
// email verification, email OTP, TOTP, MFA tickets, anonymous accounts
// and promote, admin disable-mfa) through a real node with a seeded
// random mix, part of it concurrent, then replays the node's Raft log into
// two fresh replicas (in random batches and one entry at a time). Both
// must end byte-identical to the node and compute, for every command, the
// outcome the proposer saw: random secrets, hashes and times travel in the
// commands, and the single-use and attempt rules are decided against the
// database.
//
// SVCD_DET_SEED=<n> reruns another sequence.
func TestAuthFlowsReplay(t *testing.T) {
	seed := detSeed(t, 20261122)
	dir := t.TempDir()
	node := replOpen(t, stack.Config{DataDir: dir})
	w := newFlowWorkload(t, node)

	w.run(rand.New(rand.NewPCG(seed, 0)), 200)
	var wg sync.WaitGroup
	for g := 1; g <= 6; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			w.run(rand.New(rand.NewPCG(seed, uint64(g))), 100)
		}(g)
	}
	wg.Wait()
	w.run(rand.New(rand.NewPCG(seed, 1000)), 100)
	t.Logf("workload: %s", w.summary())
	for _, msg := range w.unexpected {
		t.Errorf("unexpected error: %s", msg)
	}
	for _, op := range []string{"register", "anonymous", "promote", "otp.issue", "otp.auth", "totp.setup", "totp.confirm",
		"mfa.exchange", "totp.disable", "recovery.regenerate", "reset.confirm", "verify.confirm", "admin.disable_mfa"} {
		if w.logged[op] == 0 {
			t.Errorf("no %s command reached the log", op)
		}
	}
	for _, o := range []string{"ok", "wrong", "refused at apply"} {
		if w.kinds[o] == 0 {
			t.Errorf("no %q outcome: the workload does not cover what it should", o)
		}
	}
	node.close(t)

	rep := replayCheck(t, dir, seed, 48, w.outcomes)
	for _, tbl := range []string{"table:_svc_otps", "table:_svc_totp", "table:_svc_recovery_codes", "table:_svc_mfa_tickets", "table:_svc_code_failures"} {
		if _, ok := rep.digest[tbl]; !ok {
			t.Errorf("the digest does not cover %s", tbl)
		}
	}
}

const flowPassword = "a-long-password-1"

// flowUser is what the workload knows of one account.
type flowUser struct {
	id, email string
	token     string // a session token, "" when none is at hand
	secret    string // TOTP secret from the last setup
	recovery  []string
	otp       *auth.IssuedOTP
}

type flowWorkload struct {
	t      *testing.T
	eng    *engine.Engine
	auth   *auth.Auth
	signer *token.Signer
	ctx    context.Context
	coll   string // collection id

	mu         sync.Mutex
	users      map[string]*flowUser // by email
	guests     []string             // guest session tokens
	outcomes   map[uint64]detOutcome
	logged     map[string]int
	kinds      map[string]int
	unexpected []string
}

func newFlowWorkload(t *testing.T, node *replNode) *flowWorkload {
	var sec map[string]string
	if err := json.Unmarshal(node.Secrets(), &sec); err != nil {
		t.Fatal(err)
	}
	key, _ := hex.DecodeString(sec["jwt_key"])
	signer, err := token.NewSigner(key)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	w := &flowWorkload{t: t, eng: node.Engine, auth: node.Auth, signer: signer, ctx: ctx,
		users: map[string]*flowUser{}, outcomes: map[uint64]detOutcome{}, logged: map[string]int{}, kinds: map[string]int{}}
	c, _, err := w.eng.Schema().CreateCollection(ctx, []byte(`{"name":"members","type":"auth","create_rule":"","fields":[{"name":"name","type":"text"}],
		"view_rule":"id = @request.auth.id","update_rule":"id = @request.auth.id",
		"auth_options":{"password":true,"otp":true,"anonymous":true,"mfa":true,"oauth2":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	w.coll = c.ID
	if _, _, err := w.eng.PatchSettings(ctx, []byte(`{"auth.otp.enabled":"1","auth.anonymous.enabled":"1","app.url":"https://det.test"}`)); err != nil {
		t.Fatal(err)
	}
	return w
}

// note records an operation. idx 0: refused before the log. applied: the
// command's own result when the engine maps a committed outcome (a wrong
// code that was counted) to an error for the caller.
func (w *flowWorkload) note(op string, idx uint64, err error, counted bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if de := engine.AsError(err); err != nil && (de == nil || de.Kind == engine.KindInternal || de.Kind == engine.KindUnavailable) {
		w.unexpected = append(w.unexpected, fmt.Sprintf("%s (index %d): %v", op, idx, err))
	}
	if idx == 0 {
		return
	}
	w.logged[op]++
	result := replOutcome(err)
	switch {
	case err == nil:
		w.kinds["ok"]++
	case counted:
		w.kinds["wrong"]++
		result = "ok" // the attempt committed; the answer is the caller's
	default:
		w.kinds["refused at apply"]++
	}
	w.outcomes[idx] = detOutcome{op: op, result: result}
}

// wrongCodeCounted tells, for the error of a code exchange, whether the
// command committed a wrong attempt (the caller's 401) rather than being
// refused whole at apply (429: the account's code budget was spent).
func wrongCodeCounted(err error) bool {
	de := engine.AsError(err)
	return err != nil && (de == nil || de.Kind != engine.KindTooManyRequests)
}

func (w *flowWorkload) summary() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var parts []string
	for k, v := range w.logged {
		parts = append(parts, fmt.Sprintf("%s=%d", k, v))
	}
	sort.Strings(parts)
	return fmt.Sprintf("%v; logged %s", w.kinds, strings.Join(parts, " "))
}

// pick returns a random known user (nil if none), with the lock released.
func (w *flowWorkload) pick(r *rand.Rand) *flowUser {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.users) == 0 {
		return nil
	}
	emails := make([]string, 0, len(w.users))
	for e := range w.users {
		emails = append(emails, e)
	}
	sort.Strings(emails)
	u := *w.users[emails[r.IntN(len(emails))]]
	return &u
}

func (w *flowWorkload) update(email string, f func(u *flowUser)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if u := w.users[email]; u != nil {
		f(u)
	}
}

// session signs email in and returns a session token ("" behind TOTP).
func (w *flowWorkload) session(email string) string {
	s, err := w.auth.LoginUser(w.ctx, "members", email, flowPassword, "10.0.0.9")
	if err != nil || s.MFARequired {
		return ""
	}
	return s.Token
}

func (w *flowWorkload) principal(tok string) (engine.Principal, bool) {
	if tok == "" {
		return engine.Principal{}, false
	}
	p, err := w.auth.Authenticate(w.ctx, tok)
	return p, err == nil
}

func (w *flowWorkload) run(r *rand.Rand, n int) {
	for range n {
		if w.t.Failed() {
			return
		}
		w.step(r)
	}
}

func (w *flowWorkload) step(r *rand.Rand) {
	u := w.pick(r)
	// Weights favour the second-factor paths, which need a setup and a
	// confirm before anything else happens.
	switch op := r.IntN(20); {
	case op == 0 || u == nil:
		email := fmt.Sprintf("u%d@example.com", r.IntN(10))
		rec, idx, err := w.auth.Register(w.ctx, engine.Principal{}, "members", []byte(`{"email":"`+email+`","password":"`+flowPassword+`"}`))
		w.note("register", idx, err, false)
		if err == nil {
			var v struct{ ID string }
			json.Unmarshal(rec.JSON, &v)
			w.mu.Lock()
			w.users[email] = &flowUser{id: v.ID, email: email, token: w.session(email)}
			w.mu.Unlock()
		}
	case op == 1 || op == 19:
		s, idx, err := w.auth.SignInAnonymous(w.ctx, "members")
		w.note("anonymous", idx, err, false)
		if err == nil {
			w.mu.Lock()
			w.guests = append(w.guests, s.Token)
			w.mu.Unlock()
		}
	case op == 2:
		w.mu.Lock()
		if len(w.guests) == 0 {
			w.mu.Unlock()
			return
		}
		g := w.guests[r.IntN(len(w.guests))]
		w.mu.Unlock()
		p, ok := w.principal(g)
		if !ok {
			return
		}
		email := fmt.Sprintf("p%d@example.com", r.IntN(6))
		s, idx, err := w.auth.Promote(w.ctx, p, "members", []byte(`{"email":"`+email+`","password":"`+flowPassword+`","name":"G"}`))
		w.note("promote", idx, err, false)
		if err == nil {
			w.mu.Lock()
			w.users[email] = &flowUser{id: p.ID, email: email, token: s.Token}
			w.mu.Unlock()
		}
	case op == 3:
		otp, idx, err := w.auth.IssueOTP(w.ctx, "members", u.email)
		w.note("otp.issue", idx, err, false)
		w.update(u.email, func(x *flowUser) { x.otp = otp })
	case op <= 5:
		if u.otp == nil {
			return
		}
		in := auth.OTPAuth{Code: u.otp.Code, Email: u.email}
		switch r.IntN(3) {
		case 0:
			in = auth.OTPAuth{Token: u.otp.Token}
		case 1:
			in.Code = fmt.Sprintf("%06d", r.IntN(1000000))
		}
		_, idx, err := w.auth.AuthWithOTP(w.ctx, "members", in)
		w.note("otp.auth", idx, err, wrongCodeCounted(err))
	case op == 6:
		p, ok := w.principal(u.token)
		if !ok {
			return
		}
		s, idx, err := w.auth.Factors().SetupTOTP(w.ctx, p, "members")
		w.note("totp.setup", idx, err, false)
		if err != nil {
			return
		}
		w.update(u.email, func(x *flowUser) { x.secret = s.Secret })
		if r.IntN(3) > 0 {
			code, _ := totp.Code(s.Secret, time.Now())
			on, idx, err := w.auth.Factors().ConfirmTOTP(w.ctx, p, "members", code)
			w.note("totp.confirm", idx, err, false)
			if err == nil {
				w.update(u.email, func(x *flowUser) { x.recovery = on.RecoveryCodes })
			}
		}
	case op <= 8:
		p, ok := w.principal(u.token)
		if !ok || u.secret == "" {
			return
		}
		code, _ := totp.Code(u.secret, time.Now())
		on, idx, err := w.auth.Factors().ConfirmTOTP(w.ctx, p, "members", code)
		w.note("totp.confirm", idx, err, false)
		if err == nil {
			w.update(u.email, func(x *flowUser) { x.recovery = on.RecoveryCodes })
		}
	case op <= 12:
		s, err := w.auth.LoginUser(w.ctx, "members", u.email, flowPassword, "10.0.0.9")
		if err != nil || !s.MFARequired {
			return
		}
		var code, rec string
		switch r.IntN(3) {
		case 0:
			code, _ = totp.Code(u.secret, time.Now())
		case 1:
			if len(u.recovery) > 0 {
				rec = u.recovery[r.IntN(len(u.recovery))]
			}
		}
		if code == "" && rec == "" {
			code = fmt.Sprintf("%06d", r.IntN(1000000))
		}
		sess, idx, err := w.auth.Factors().LoginMFA(w.ctx, "members", s.MFAToken, code, rec)
		w.note("mfa.exchange", idx, err, wrongCodeCounted(err))
		if err == nil {
			w.update(u.email, func(x *flowUser) { x.token = sess.Token })
		}
	case op == 13:
		p, ok := w.principal(u.token)
		if !ok || len(u.recovery) == 0 {
			return
		}
		idx, err := w.auth.Factors().DisableTOTP(w.ctx, p, "members", "", u.recovery[r.IntN(len(u.recovery))])
		w.note("totp.disable", idx, err, false)
	case op == 14:
		p, ok := w.principal(u.token)
		if !ok {
			return
		}
		codes, idx, err := w.auth.Factors().RegenerateRecoveryCodes(w.ctx, p, "members")
		w.note("recovery.regenerate", idx, err, false)
		if err == nil {
			w.update(u.email, func(x *flowUser) { x.recovery = codes })
		}
	case op == 15:
		tok, _, err := w.signer.Issue(token.Claims{ID: u.id, Email: u.email, Collection: w.coll}, "reset", time.Now(), 30*time.Minute)
		if err != nil {
			w.t.Fatal(err)
		}
		for range 1 + r.IntN(2) { // a second use is refused at apply
			idx, err := w.auth.ConfirmPasswordReset(w.ctx, "members", tok, flowPassword)
			w.note("reset.confirm", idx, err, false)
		}
		w.update(u.email, func(x *flowUser) { x.token = "" })
		if tok := w.session(u.email); tok != "" {
			w.update(u.email, func(x *flowUser) { x.token = tok })
		}
	case op <= 17:
		tok, _, err := w.signer.Issue(token.Claims{ID: u.id, Email: u.email, Collection: w.coll}, "verify", time.Now(), time.Hour)
		if err != nil {
			w.t.Fatal(err)
		}
		idx, err := w.auth.ConfirmVerification(w.ctx, "members", tok)
		w.note("verify.confirm", idx, err, false)
	case op == 18:
		idx, err := w.auth.Factors().AdminDisableMFA(w.ctx, "members", u.id)
		w.note("admin.disable_mfa", idx, err, false)
	}
}
