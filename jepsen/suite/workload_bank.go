package suite

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"svcd/jepsen/harness"
)

const (
	bankAccounts = `{"name":"accounts","type":"base","fields":[{"name":"balance","type":"number"}],
	"view_rule":"","update_rule":""}`
	// A transfer's batch creates its transfers record with an id the
	// client chose: the batch cannot be applied twice without failing on
	// the id, and its effect is visible in the final state.
	bankTransfers = `{"name":"transfers","type":"base","fields":[{"name":"src","type":"text","required":true},
	{"name":"dst","type":"text","required":true},{"name":"amount","type":"number"}],
	"view_rule":"","create_rule":""}`
	// bankMaxAmount bounds one transfer (and the balance it reads).
	bankMaxAmount = 10
)

// Bank moves money between a few accounts: each transfer reads both
// accounts (strong reads, keeping their ETags), then sends through a random
// node one batch of two PATCHes conditional on those ETags (If-Match,
// checked when the batch is applied) and the create of a transfers record
// with a fresh id. Other operations read every account in one list (one
// snapshot), strong or local, and record the balances. The checker wants
// every read to keep the initial total with no negative balance, and
// every node to end with the same accounts and transfers, the balances
// equal to the initial ones plus the transfers present, every
// acknowledged transfer present, none that failed.
type Bank struct {
	// Accounts and Initial: how many accounts, each with Initial.
	Accounts int
	Initial  int64

	ids     []string
	initial map[string]int64

	mu    sync.Mutex
	seq   map[int]int
	sent  []bankTransfer
	index map[string]int // transfer id -> position in sent
	reads []bankRead
}

// NewBank is the bank workload over eight accounts of 100.
func NewBank() *Bank {
	return &Bank{Accounts: 8, Initial: 100, seq: map[int]int{}, index: map[string]int{}}
}

func (b *Bank) Name() string { return "bank" }

// Setup creates the collections and the accounts, all in one batch
// through the leader, and waits until every node has them.
func (b *Bank) Setup(ctx context.Context, env *Env) error {
	for _, def := range []string{bankAccounts, bankTransfers} {
		if err := createCollection(ctx, env, def); err != nil {
			return err
		}
	}
	b.initial = map[string]int64{}
	var reqs []map[string]any
	for i := range b.Accounts {
		id := fmt.Sprintf("account%08d", i)
		b.ids = append(b.ids, id)
		b.initial[id] = b.Initial
		reqs = append(reqs, map[string]any{"method": "POST", "url": "/api/v1/accounts", "body": map[string]any{"id": id, "balance": b.Initial}})
	}
	l, err := env.C.WaitLeader(15 * time.Second)
	if err != nil {
		return err
	}
	resp, err := env.C.Admin(l).Do(ctx, "POST", "/api/v1/batch", map[string]any{"requests": reqs})
	if err != nil {
		return err
	}
	if resp.Status != http.StatusOK {
		return fmt.Errorf("create accounts: %s", resp)
	}
	return waitAll(ctx, env, resp.Index())
}

func (b *Bank) Step(ctx context.Context, w *Worker) {
	switch p := w.Rand.IntN(10); {
	case p < 2:
		b.read(ctx, w, true)
	case p < 3:
		b.read(ctx, w, false)
	default:
		b.transfer(ctx, w)
	}
}

// read lists every account on a random node in one request and records
// the balances.
func (b *Bank) read(ctx context.Context, w *Worker, strong bool) {
	nd := w.Node()
	if nd == nil {
		time.Sleep(20 * time.Millisecond)
		return
	}
	kind, cl := "read-local", w.Client(nd)
	if strong {
		kind, cl = "read", cl.Strong()
	}
	resp, err := cl.Do(ctx, "GET", fmt.Sprintf("/api/v1/accounts?perPage=%d&skipTotal=1", 2*b.Accounts), nil)
	if err != nil || resp.Status != http.StatusOK {
		w.Done(kind, Fail) // no effect
		return
	}
	var page struct {
		Data []struct {
			ID      string
			Balance float64
		}
	}
	if err := resp.JSON(&page); err != nil {
		w.Errorf("%s GET accounts: %v: %s", nd.Name, err, resp)
		return
	}
	r := bankRead{Node: nd.Name, Strong: strong, Balances: map[string]int64{}}
	for _, a := range page.Data {
		r.Balances[a.ID] = int64(a.Balance)
	}
	b.mu.Lock()
	b.reads = append(b.reads, r)
	b.mu.Unlock()
	w.Done(kind, OK)
}

// bankAccount is one account as a strong GET returned it.
type bankAccount struct {
	balance int64
	etag    string
}

// get reads one account with a strong read (ok false: the read failed and
// was recorded).
func (b *Bank) get(ctx context.Context, w *Worker, cl *harness.Client, id string) (bankAccount, bool) {
	resp, err := cl.Strong().Do(ctx, "GET", "/api/v1/accounts/"+id, nil)
	if err != nil || resp.Status != http.StatusOK {
		w.Done("lookup", Fail)
		return bankAccount{}, false
	}
	var rec struct{ Balance float64 }
	if err := resp.JSON(&struct{ Data any }{&rec}); err != nil || resp.Header.Get("ETag") == "" {
		w.Errorf("GET account %s: %v: %s (ETag %q)", id, err, resp, resp.Header.Get("ETag"))
		return bankAccount{}, false
	}
	return bankAccount{int64(rec.Balance), resp.Header.Get("ETag")}, true
}

// transfer reads two accounts and moves up to bankMaxAmount from the one
// with money to the other in one conditional batch, through another random
// node.
func (b *Bank) transfer(ctx context.Context, w *Worker) {
	nd := w.Node()
	if nd == nil {
		time.Sleep(20 * time.Millisecond)
		return
	}
	i := w.Rand.IntN(len(b.ids))
	j := (i + 1 + w.Rand.IntN(len(b.ids)-1)) % len(b.ids)
	from, to := b.ids[i], b.ids[j]
	cl := w.Client(nd)
	a, ok := b.get(ctx, w, cl, from)
	if !ok {
		return
	}
	c, ok := b.get(ctx, w, cl, to)
	if !ok {
		return
	}
	if a.balance <= 0 {
		if c.balance <= 0 {
			return // nothing to move: pick another pair next time
		}
		from, to, a, c = to, from, c, a
	}
	t := bankTransfer{From: from, To: to, Amount: 1 + w.Rand.Int64N(min(a.balance, bankMaxAmount))}
	b.mu.Lock()
	b.seq[w.ID]++
	t.ID = fmt.Sprintf("tx%03d%010d", w.ID, b.seq[w.ID])
	b.mu.Unlock()

	if nd = w.Node(); nd == nil {
		return
	}
	t.Node, t.Outcome = nd.Name, Info
	b.mu.Lock()
	b.index[t.ID] = len(b.sent)
	b.sent = append(b.sent, t)
	b.mu.Unlock()
	reqs := []map[string]any{
		{"method": "PATCH", "url": "/api/v1/accounts/" + from, "body": map[string]any{"balance": a.balance - t.Amount}, "headers": map[string]string{"If-Match": a.etag}},
		{"method": "PATCH", "url": "/api/v1/accounts/" + to, "body": map[string]any{"balance": c.balance + t.Amount}, "headers": map[string]string{"If-Match": c.etag}},
		{"method": "POST", "url": "/api/v1/transfers", "body": map[string]any{"id": t.ID, "src": from, "dst": to, "amount": t.Amount}},
	}
	resp, err := w.Client(nd).Do(context.Background(), "POST", "/api/v1/batch", map[string]any{"requests": reqs})
	switch {
	case transient(status(resp), err):
		w.Done("transfer", Info)
	case resp.Status == http.StatusOK:
		if err := bankAnswer(resp, t, a.balance-t.Amount, c.balance+t.Amount); err != nil {
			w.Errorf("%s transfer %s: %v", nd.Name, t.ID, err)
		}
		b.settle(t.ID, OK)
		w.Done("transfer", OK)
	case resp.Status == http.StatusPreconditionFailed:
		b.settle(t.ID, Fail)
		w.Done("transfer", Fail)
	default:
		w.Errorf("%s transfer %s: %s", nd.Name, t.ID, resp)
		time.Sleep(100 * time.Millisecond)
	}
}

// settle records a sent transfer's definite outcome.
func (b *Bank) settle(id string, o Outcome) {
	b.mu.Lock()
	b.sent[b.index[id]].Outcome = o
	b.mu.Unlock()
}

// bankAnswer checks a committed transfer's answer: both updates with the
// new balances, then the transfers record.
func bankAnswer(resp *harness.Response, t bankTransfer, fromBal, toBal int64) error {
	var out struct {
		Data []struct {
			Status int
			Body   struct {
				ID      string
				Balance float64
			}
		}
	}
	if err := resp.JSON(&out); err != nil {
		return err
	}
	if len(out.Data) != 3 {
		return fmt.Errorf("%d answers, want 3: %s", len(out.Data), resp)
	}
	d := out.Data
	if d[0].Status != 200 || d[0].Body.ID != t.From || int64(d[0].Body.Balance) != fromBal ||
		d[1].Status != 200 || d[1].Body.ID != t.To || int64(d[1].Body.Balance) != toBal ||
		d[2].Status != 201 || d[2].Body.ID != t.ID {
		return fmt.Errorf("unexpected answer: %s", resp)
	}
	return nil
}

// Check reads every node's accounts and transfers (local reads, after the
// convergence the runner waited for) and judges the history.
func (b *Bank) Check(ctx context.Context, env *Env) Verdict {
	b.mu.Lock()
	sent := append([]bankTransfer(nil), b.sent...)
	reads := append([]bankRead(nil), b.reads...)
	b.mu.Unlock()
	v := Verdict{Valid: true}
	final := map[string]bankState{}
	for _, nd := range env.C.Running() {
		st, err := b.state(ctx, env, nd)
		if err != nil {
			v.Valid = false
			v.Notes = append(v.Notes, fmt.Sprintf("%s: final read: %v", nd.Name, err))
			continue
		}
		final[nd.Name] = st
	}
	f, notes := checkBank(b.initial, sent, reads, final)
	v.Valid = v.Valid && f.valid()
	v.Acknowledged, v.Lost, v.Duplicates = f.OK, f.Lost, f.Duplicates
	v.Notes = append(v.Notes, "bank: "+f.String())
	v.Notes = append(v.Notes, notes...)
	return v
}

// state lists the accounts and the transfers node nd holds.
func (b *Bank) state(ctx context.Context, env *Env, nd *harness.Node) (bankState, error) {
	cl := env.C.Admin(nd)
	cl.Timeout = 30 * time.Second
	st := bankState{Balances: map[string]int64{}}
	accts, err := harness.ListAll(ctx, cl, "accounts", nil)
	if err != nil {
		return st, err
	}
	for _, r := range accts {
		var a struct{ Balance float64 }
		if err := json.Unmarshal(r.Raw, &a); err != nil {
			return st, err
		}
		st.Balances[r.ID] = int64(a.Balance)
	}
	trs, err := harness.ListAll(ctx, cl, "transfers", nil)
	if err != nil {
		return st, err
	}
	for _, r := range trs {
		var t struct {
			Src, Dst string
			Amount   float64
		}
		if err := json.Unmarshal(r.Raw, &t); err != nil {
			return st, err
		}
		st.Transfers = append(st.Transfers, bankTransfer{ID: r.ID, From: t.Src, To: t.Dst, Amount: int64(t.Amount)})
	}
	return st, nil
}
