package stack_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/descope/virtualwebauthn"

	"svcd/cmd/svcd/stack"
	"svcd/engine"
	"svcd/engine/auth"
)

// TestPasskeysReplay drives the passkey commands (ceremony tickets,
// registrations, sign-ins with sign counters that go up, stay or are 0,
// renames, deletes, accounts deleted with their passkeys) through a real
// node with a seeded random mix, part of it concurrent, with a virtual
// authenticator (virtualwebauthn) answering the ceremonies; then replays
// the node's Raft log into two fresh replicas. Both must end
// byte-identical to the node and compute, for every command, the outcome
// the proposer saw: the challenge, the credential record and the times
// travel in the commands; the tickets' single use and the counter are
// decided against the database.
//
// SVCD_DET_SEED=<n> reruns another sequence.
func TestPasskeysReplay(t *testing.T) {
	seed := detSeed(t, 20260121)
	dir := t.TempDir()
	node := replOpen(t, stack.Config{DataDir: dir})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if _, _, err := node.Engine.Schema().CreateCollection(ctx, []byte(`{"name":"members","type":"auth","create_rule":""}`)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := node.Engine.PatchSettings(ctx, []byte(`{"app.url":"https://det.test"}`)); err != nil {
		t.Fatal(err)
	}
	rec := &pkRecorder{outcomes: map[uint64]detOutcome{}, logged: map[string]int{}, kinds: map[string]int{}}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := &pkWorkload{t: t, ctx: ctx, eng: node.Engine, auth: node.Auth, rec: rec, g: g}
			w.run(rand.New(rand.NewPCG(seed, uint64(g))), 80)
		}()
	}
	wg.Wait()
	t.Logf("workload: %v; logged %v", rec.kinds, rec.logged)
	for _, msg := range rec.unexpected {
		t.Errorf("unexpected error: %s", msg)
	}
	for _, op := range []string{"register", "ceremony", "passkey.register", "passkey.login", "passkey.rename", "passkey.delete", "account.delete"} {
		if rec.logged[op] == 0 {
			t.Errorf("no %s command reached the log", op)
		}
	}
	if rec.kinds["refused at apply"] == 0 || rec.kinds["ok"] == 0 {
		t.Errorf("outcomes %v: the workload does not cover what it should", rec.kinds)
	}
	node.close(t)

	rep := replayCheck(t, dir, seed, 48, rec.outcomes)
	for _, tbl := range []string{"table:_svc_webauthn_credentials", "table:_svc_webauthn_tickets"} {
		if _, ok := rep.digest[tbl]; !ok {
			t.Errorf("the digest does not cover %s", tbl)
		}
	}
}

// pkRecorder gathers what the workers proposed and saw.
type pkRecorder struct {
	mu         sync.Mutex
	outcomes   map[uint64]detOutcome
	logged     map[string]int
	kinds      map[string]int
	unexpected []string
}

// note records an operation; idx 0: refused before the log.
func (r *pkRecorder) note(op string, idx uint64, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if de := engine.AsError(err); err != nil && (de == nil || de.Kind == engine.KindInternal || de.Kind == engine.KindUnavailable) {
		r.unexpected = append(r.unexpected, fmt.Sprintf("%s (index %d): %v", op, idx, err))
	}
	if idx == 0 {
		return
	}
	r.logged[op]++
	if err == nil {
		r.kinds["ok"]++
	} else {
		r.kinds["refused at apply"]++
	}
	r.outcomes[idx] = detOutcome{op: op, result: replOutcome(err)}
}

// pkWorkload is one worker: its own accounts, each with its devices.
type pkWorkload struct {
	t    *testing.T
	ctx  context.Context
	eng  *engine.Engine
	auth *auth.Auth
	rec  *pkRecorder
	g    int

	users []*pkUser
	made  int // accounts made, for their emails
}

type pkUser struct {
	id, email string
	p         engine.Principal
	devices   []*pkDevice
}

type pkDevice struct {
	id   string // the passkey's id
	auth virtualwebauthn.Authenticator
	cred virtualwebauthn.Credential
}

// detRP is the relying party of app.url https://det.test.
func detRP() virtualwebauthn.RelyingParty {
	return virtualwebauthn.RelyingParty{ID: "det.test", Name: "det.test", Origin: "https://det.test"}
}

func (w *pkWorkload) run(r *rand.Rand, n int) {
	for range n {
		if w.t.Failed() {
			return
		}
		w.step(r)
	}
}

func (w *pkWorkload) step(r *rand.Rand) {
	if len(w.users) == 0 || r.IntN(12) == 0 {
		w.newUser()
		return
	}
	u := w.users[r.IntN(len(w.users))]
	pk := w.auth.Passkeys()
	switch op := r.IntN(10); {
	case op < 3 || len(u.devices) == 0:
		w.enroll(u, r)
	case op < 7:
		d := u.devices[r.IntN(len(u.devices))]
		email := ""
		if r.IntN(2) == 0 {
			email = u.email
		}
		c, idx, err := pk.BeginPasskeyLogin(w.ctx, "members", email)
		w.rec.note("ceremony", idx, err)
		if err != nil {
			return
		}
		switch r.IntN(4) {
		case 0: // the same counter again: refused when not 0
		case 1:
			d.cred.Counter = 0
		default:
			d.cred.Counter += uint32(1 + r.IntN(3))
		}
		resp := assertFor(w.t, d, c.Options)
		_, idx, err = pk.FinishPasskeyLogin(w.ctx, "members", auth.PasskeyFinish{Ticket: c.Ticket, Response: resp})
		w.rec.note("passkey.login", idx, err)
		if r.IntN(5) == 0 { // the ticket again: spent
			_, idx, err = pk.FinishPasskeyLogin(w.ctx, "members", auth.PasskeyFinish{Ticket: c.Ticket, Response: resp})
			w.rec.note("passkey.login", idx, err)
		}
	case op == 7:
		d := u.devices[r.IntN(len(u.devices))]
		_, idx, err := pk.RenamePasskey(w.ctx, u.p, "members", d.id, fmt.Sprintf("key %d", r.IntN(100)))
		w.rec.note("passkey.rename", idx, err)
	case op == 8:
		i := r.IntN(len(u.devices))
		idx, err := pk.DeletePasskey(w.ctx, u.p, "members", u.devices[i].id)
		w.rec.note("passkey.delete", idx, err)
		u.devices = append(u.devices[:i], u.devices[i+1:]...)
	default:
		admin := engine.Principal{Kind: engine.AdminPrincipal, ID: "adm_test", Role: engine.RoleOwner}
		idx, err := w.eng.Records().DeleteRecord(w.ctx, admin, "members", u.id, "")
		w.rec.note("account.delete", idx, err)
		for i, v := range w.users {
			if v == u {
				w.users = append(w.users[:i], w.users[i+1:]...)
				break
			}
		}
	}
}

func (w *pkWorkload) newUser() {
	w.made++
	email := fmt.Sprintf("g%du%d@example.com", w.g, w.made)
	rec, idx, err := w.auth.Register(w.ctx, engine.Principal{}, "members", []byte(`{"email":"`+email+`","password":"`+flowPassword+`"}`))
	w.rec.note("register", idx, err)
	if err != nil {
		return
	}
	var v struct{ ID string }
	if err := json.Unmarshal(rec.JSON, &v); err != nil {
		w.t.Error(err)
		return
	}
	s, err := w.auth.LoginUser(w.ctx, "members", email, flowPassword, "10.0.0.9")
	if err != nil {
		w.t.Errorf("login: %v", err)
		return
	}
	p, err := w.auth.Authenticate(w.ctx, s.Token)
	if err != nil {
		w.t.Errorf("authenticate: %v", err)
		return
	}
	w.users = append(w.users, &pkUser{id: v.ID, email: email, p: p})
}

func (w *pkWorkload) enroll(u *pkUser, r *rand.Rand) {
	pk := w.auth.Passkeys()
	c, idx, err := pk.BeginPasskeyRegistration(w.ctx, u.p, "members")
	w.rec.note("ceremony", idx, err)
	if err != nil {
		return
	}
	d := &pkDevice{auth: virtualwebauthn.NewAuthenticator(), cred: virtualwebauthn.NewCredential(virtualwebauthn.KeyTypeEC2)}
	d.cred.Counter = uint32(r.IntN(3))
	opts, err := virtualwebauthn.ParseAttestationOptions(string(c.Options))
	if err != nil {
		w.t.Errorf("registration options: %v", err)
		return
	}
	d.auth.Options.UserHandle = []byte(opts.UserID)
	resp := virtualwebauthn.CreateAttestationResponse(detRP(), d.auth, d.cred, *opts)
	got, idx, err := pk.FinishPasskeyRegistration(w.ctx, u.p, "members", auth.PasskeyFinish{Ticket: c.Ticket, Response: json.RawMessage(resp)})
	w.rec.note("passkey.register", idx, err)
	if err == nil {
		d.id = got.ID
		u.devices = append(u.devices, d)
	}
}

// assertFor answers sign-in options with d's credential.
func assertFor(t *testing.T, d *pkDevice, options []byte) json.RawMessage {
	opts, err := virtualwebauthn.ParseAssertionOptions(string(options))
	if err != nil {
		t.Errorf("sign-in options: %v", err)
		return json.RawMessage(`{}`)
	}
	return json.RawMessage(virtualwebauthn.CreateAssertionResponse(detRP(), d.auth, d.cred, *opts))
}
