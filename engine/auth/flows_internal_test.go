package auth

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"svcd/engine"
	"svcd/engine/password"
	"svcd/engine/token"
	"svcd/fsm"
	"svcd/fsm/fsmtest"
)

// The auth flows' time rules (expiries, TOTP steps, attempt caps) against
// a clock the test moves. The engine runs on a real store; its commands
// go straight to ApplyBatch, one entry at a time, as a log would deliver
// them.
//
// The token package checks iat and exp against the real clock, so the
// engine's clock stays at or behind the real one whenever a token is
// issued and later verified; it runs ahead only for the step that must
// see a token expire where commands are applied.

type flowClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *flowClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *flowClock) advance(d time.Duration) { c.set(c.now().Add(d)) }

func (c *flowClock) set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

type flowEnv struct {
	t   *testing.T
	e   *engine.Engine
	a   *Auth
	clk *flowClock
	ctx context.Context
}

// newFlowEnv opens an engine whose clock reads start, 10 s into a TOTP
// step, with the auth collection "members" (every auth option on) and
// the OTP and anonymous switches on.
func newFlowEnv(t *testing.T, start time.Time) *flowEnv {
	t.Helper()
	store := fsmtest.Open(t)
	signer, err := token.NewSigner([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	clk := &flowClock{t: start.Truncate(30 * time.Second).Add(10 * time.Second)}
	e, err := engine.New(engine.Options{Store: store, Clock: clk.now, Logger: slog.New(slog.DiscardHandler),
		PasswordParams: password.Params{Memory: 64, Time: 1, Threads: 1, KeyLen: 32}})
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(e, Options{Signer: signer})
	if err != nil {
		t.Fatal(err)
	}
	e.SetProposer(&fsmtest.Log{S: store})
	env := &flowEnv{t: t, e: e, a: a, clk: clk, ctx: context.Background()}
	env.ok(e.Migrate(env.ctx))
	_, _, err = e.Schema().CreateCollection(env.ctx, []byte(`{"name":"members","type":"auth","create_rule":"","fields":[{"name":"name","type":"text"}],
		"auth_options":{"password":true,"otp":true,"anonymous":true,"mfa":true,"oauth2":true}}`))
	env.ok(err)
	_, _, err = e.PatchSettings(env.ctx, []byte(`{"auth.otp.enabled":"1","auth.anonymous.enabled":"1","app.url":"https://acme.test"}`))
	env.ok(err)
	return env
}

func (f *flowEnv) ok(err error) {
	f.t.Helper()
	if err != nil {
		f.t.Fatal(err)
	}
}

// user registers email with a password and returns its id.
func (f *flowEnv) user(email string) string {
	f.t.Helper()
	rec, _, err := f.a.Register(f.ctx, engine.Principal{}, "members", []byte(`{"email":"`+email+`","password":"a-long-password-1"}`))
	f.ok(err)
	return strings.Split(strings.Split(string(rec.JSON), `"id":"`)[1], `"`)[0]
}

// principal authenticates a session token.
func (f *flowEnv) principal(tok string) engine.Principal {
	f.t.Helper()
	p, err := f.a.Authenticate(f.ctx, tok)
	f.ok(err)
	return p
}

func (f *flowEnv) login(email string) *UserSession {
	f.t.Helper()
	s, err := f.a.LoginUser(f.ctx, "members", email, "a-long-password-1", "10.0.0.1")
	f.ok(err)
	return s
}

// wantErr requires err to be the domain error want (kind and message).
func wantErr(t *testing.T, what string, err error, want *engine.Error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: got %v, want %v", what, err, want)
	}
}

// oath computes a TOTP code with oathtool (independent of the server).
func oath(t *testing.T, secret string, at time.Time) string {
	t.Helper()
	bin, err := exec.LookPath("oathtool")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("oathtool not found (CI is set, so this peer is required)")
		}
		t.Skip("oathtool not installed (set CI=1 to make this a failure)")
	}
	out, err := exec.Command(bin, "--totp=sha1", "--digits=6", "--time-step-size=30s", "--base32",
		"--now", at.UTC().Format("2006-01-02 15:04:05 UTC"), secret).CombinedOutput()
	if err != nil {
		t.Fatalf("oathtool: %v\n%s", err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestOTPExpiryAndAttempts(t *testing.T) {
	// The clock runs ahead by 35 minutes in all, and tokens are checked
	// against the real time too: start that far back.
	f := newFlowEnv(t, time.Now().Add(-40*time.Minute))
	uid := f.user("ann@example.com")
	auth := func(code string) error {
		_, _, err := f.a.AuthWithOTP(f.ctx, "members", OTPAuth{Code: code, Email: "ann@example.com"})
		return err
	}

	otp, _, err := f.a.IssueOTP(f.ctx, "members", "ann@example.com")
	f.ok(err)
	f.clk.advance(otpTTL - time.Second)
	f.ok(auth(otp.Code)) // valid up to its last second

	otp, _, _ = f.a.IssueOTP(f.ctx, "members", "ann@example.com")
	f.clk.advance(otpTTL)
	wantErr(t, "code at 10 minutes", auth(otp.Code), ErrInvalidCreds)

	otp, _, _ = f.a.IssueOTP(f.ctx, "members", "ann@example.com")
	wrong := "000000"
	if otp.Code == wrong {
		wrong = "000001"
	}
	for range otpMaxAttempts - 1 {
		wantErr(t, "wrong code", auth(wrong), ErrInvalidCreds)
	}
	s, _, err := f.a.AuthWithOTP(f.ctx, "members", OTPAuth{Token: otp.Token})
	f.ok(err)
	if p := f.principal(s.Token); p.ID != uid || p.AuthRecord["email_verified"] != true {
		t.Fatalf("otp session: %+v", p)
	}

	// The counter lives in the table: a fifth wrong code deletes the row.
	// (A new window of the account's code budget first: the wrong codes
	// above spent most of it.)
	f.clk.advance(codeBudgetWindow * time.Second)
	otp, _, _ = f.a.IssueOTP(f.ctx, "members", "ann@example.com")
	for range otpMaxAttempts {
		wantErr(t, "wrong code", auth(wrong), ErrInvalidCreds)
	}
	var n int
	f.ok(f.e.Store().View(f.ctx, func(r *fsm.Reader) error {
		return r.QueryRow(`SELECT count(*) FROM _svc_otps`).Scan(&n)
	}))
	if n != 0 {
		t.Fatalf("%d OTP rows after the fifth wrong code", n)
	}
	wantErr(t, "right code after the burn", auth(otp.Code), ErrInvalidCreds)

	// Anonymous accounts and unknown addresses get no token.
	if got, idx, err := f.a.IssueOTP(f.ctx, "members", "nobody@example.com"); got != nil || idx != 0 || err != nil {
		t.Fatalf("unknown address: %v %d %v", got, idx, err)
	}
	g, _, err := f.a.SignInAnonymous(f.ctx, "members")
	f.ok(err)
	if got, _, _ := f.a.IssueOTP(f.ctx, "members", f.principal(g.Token).Email); got != nil {
		t.Fatal("a guest got an OTP")
	}
}

// enableTOTP sets up and confirms TOTP for the session's user at the
// current time and returns the secret and the recovery codes.
func (f *flowEnv) enableTOTP(tok string) (string, []string) {
	f.t.Helper()
	p := f.principal(tok)
	setup, _, err := f.a.fac.SetupTOTP(f.ctx, p, "members")
	f.ok(err)
	on, _, err := f.a.fac.ConfirmTOTP(f.ctx, p, "members", oath(f.t, setup.Secret, f.clk.now()))
	f.ok(err)
	return setup.Secret, on.RecoveryCodes
}

func TestTOTPStepsAndTickets(t *testing.T) {
	f := newFlowEnv(t, time.Now().Add(-3*time.Minute))
	f.user("bo@example.com")
	tok := f.login("bo@example.com").Token
	secret, codes := f.enableTOTP(tok)
	t0 := f.clk.now()

	ticket := func() string {
		s := f.login("bo@example.com")
		if !s.MFARequired || s.MFAToken == "" || s.Token != "" {
			t.Fatalf("login with TOTP on: %+v", s)
		}
		return s.MFAToken
	}
	exchange := func(tk, code, rec string) error {
		_, _, err := f.a.fac.LoginMFA(f.ctx, "members", tk, code, rec)
		return err
	}

	// The confirm code's step is spent; the next step (within the window)
	// is not; then it is.
	wantErr(t, "the confirm code again", exchange(ticket(), oath(t, secret, t0), ""), ErrInvalidCreds)
	next := oath(t, secret, t0.Add(30*time.Second))
	f.ok(exchange(ticket(), next, ""))
	wantErr(t, "the same step twice", exchange(ticket(), next, ""), ErrInvalidCreds)
	// Two steps ahead is outside the window until the clock moves.
	ahead := oath(t, secret, t0.Add(60*time.Second))
	wantErr(t, "two steps ahead", exchange(ticket(), ahead, ""), ErrInvalidCreds)
	f.clk.advance(30 * time.Second)
	f.ok(exchange(ticket(), ahead, ""))

	// A ticket lives 5 minutes: an exchange applied after that fails,
	// whatever the code.
	t1 := f.clk.now()
	tk, stale := ticket(), ticket()
	f.clk.advance(mfaTicketTTL + time.Second)
	wantErr(t, "an expired ticket", exchange(tk, "", codes[0]), errBadTicket)
	f.clk.set(t1)

	// Burned after five wrong codes.
	tk = ticket()
	for range mfaMaxAttempts {
		wantErr(t, "wrong code", exchange(tk, "", "ZZZZ-ZZZZ"), ErrInvalidCreds)
	}
	wantErr(t, "right code on a burned ticket", exchange(tk, "", codes[0]), errBadTicket)
	st, err := f.a.fac.RecoveryCodesStatus(f.ctx, f.principal(tok), "members")
	f.ok(err)
	if st.Total != 10 || st.Remaining != 10 {
		t.Fatalf("status %+v", st)
	}

	// Rows of spent tickets go once they are well past their expiry.
	count := func() (n int) {
		f.ok(f.e.Store().View(f.ctx, func(r *fsm.Reader) error {
			return r.QueryRow(`SELECT count(*) FROM _svc_mfa_tickets`).Scan(&n)
		}))
		return n
	}
	if count() == 0 {
		t.Fatal("no ticket rows")
	}
	f.clk.advance(mfaTicketTTL + mfaRowGrace + time.Minute)
	wantErr(t, "a ticket from long ago", exchange(stale, "", codes[0]), errBadTicket)
	if n := count(); n != 0 {
		t.Fatalf("%d ticket rows after the grace period", n)
	}
	f.clk.set(t0.Add(90 * time.Second))

	// Email OTP of an account with TOTP on answers a ticket.
	otp, _, err := f.a.IssueOTP(f.ctx, "members", "bo@example.com")
	f.ok(err)
	s, _, err := f.a.AuthWithOTP(f.ctx, "members", OTPAuth{Code: otp.Code, Email: "bo@example.com"})
	f.ok(err)
	if !s.MFARequired || s.Token != "" {
		t.Fatalf("otp with TOTP on: %+v", s)
	}
	f.ok(exchange(s.MFAToken, oath(t, secret, f.clk.now()), ""))

	// With the MFA feature off, TOTP is not asked for.
	_, _, err = f.e.PatchSettings(f.ctx, []byte(`{"auth.mfa.enabled":"0"}`))
	f.ok(err)
	if s := f.login("bo@example.com"); s.MFARequired {
		t.Fatal("a ticket with the MFA feature off")
	}
}

func TestResetTokenRules(t *testing.T) {
	wall := time.Now()
	f := newFlowEnv(t, wall.Add(-40*time.Minute))
	uid := f.user("cy@example.com")
	issue := func(at time.Time, email string) string {
		tok, _, err := f.a.signer.Issue(token.Claims{ID: uid, Email: email, Collection: f.e.Coll("members").ID}, audReset, at, resetTTL)
		f.ok(err)
		return tok
	}
	confirm := func(tok string) error {
		_, err := f.a.ConfirmPasswordReset(f.ctx, "members", tok, "another-password-1")
		return err
	}
	wantErr(t, "an expired token", confirm(issue(f.clk.now(), "cy@example.com")), errBadFlowToken)
	f.clk.set(wall.Add(-10 * time.Second))
	wantErr(t, "a token for another email", confirm(issue(f.clk.now(), "other@example.com")), errBadFlowToken)

	// A token issued by a node whose clock is 5 s ahead: once used, it is
	// spent although this node's clock has not reached its iat.
	ahead := issue(f.clk.now().Add(5*time.Second), "cy@example.com")
	f.ok(confirm(ahead))
	wantErr(t, "the same token again", confirm(ahead), errBadFlowToken)
	f.clk.advance(10 * time.Second)
	wantErr(t, "the same token later", confirm(ahead), errBadFlowToken)
	older := issue(f.clk.now().Add(-8*time.Second), "cy@example.com")
	wantErr(t, "a token older than the last reset", confirm(older), errBadFlowToken)
	f.ok(confirm(issue(f.clk.now(), "CY@example.com")))
}

// Conditions that can race are decided against the database when the
// command is applied, not by the proposer's earlier reads.
func TestDecidedAtApply(t *testing.T) {
	f := newFlowEnv(t, time.Now().Add(-time.Minute))
	g, _, err := f.a.SignInAnonymous(f.ctx, "members")
	f.ok(err)
	p := f.principal(g.Token)
	ci := f.e.Coll("members")
	promote := func(email string) error {
		_, _, err := f.e.Propose(f.ctx, cmdPromote, promoteCmd{Coll: ci.ID, Ver: ci.Version, ID: p.ID, Now: f.clk.now().Unix(),
			Values: map[string]any{"email": email}, JTI: p.TokenID, Exp: p.Claims.ExpiresAt.Unix()})
		return err
	}
	f.ok(promote("first@example.com"))
	wantErr(t, "a second promote of the same guest", promote("second@example.com"), errAnonymousOnly)
	if _, err := f.a.Authenticate(f.ctx, g.Token); err == nil {
		t.Fatal("the guest token survived the promote")
	}

	// Two setups, then a confirm against the first secret: the stale
	// confirm is refused.
	f.user("dee@example.com")
	dp := f.principal(f.login("dee@example.com").Token)
	first, _, err := f.a.fac.SetupTOTP(f.ctx, dp, "members")
	f.ok(err)
	st, err := f.a.fac.totpState(f.ctx, ci.ID, dp.ID)
	f.ok(err)
	_, _, err = f.a.fac.SetupTOTP(f.ctx, dp, "members")
	f.ok(err)
	_, _, err = f.e.Propose(f.ctx, cmdTOTPConfirm, totpConfirmCmd{Coll: ci.ID, UserID: dp.ID, Secret: st.sealed, Step: 1, Now: f.clk.now().Unix()})
	wantErr(t, "a confirm of a replaced secret", err, errTOTPMoved)
	// A sealed secret opens only for its own account.
	if _, err := f.a.openTOTP(ci.ID, "someone-else", st.sealed); err == nil {
		t.Fatal("a sealed TOTP secret opened for another account")
	}
	if s, err := f.a.openTOTP(ci.ID, dp.ID, st.sealed); err != nil || s != first.Secret {
		t.Fatalf("open: %q %v", s, err)
	}
}
