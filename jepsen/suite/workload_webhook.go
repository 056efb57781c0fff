package suite

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"svcd/jepsen/checker"
	"svcd/jepsen/harness"
)

// hookedCollection holds the changes whose deliveries are checked.
const hookedCollection = `{"name":"hooked","type":"base","fields":[{"name":"k","type":"text","required":true}],
	"view_rule":"","create_rule":""}`

// webhookSecret signs the workload's deliveries.
const webhookSecret = "jepsen-webhook-secret"

// Webhook creates records through random nodes while a receiver on the
// bridge records the deliveries of a webhook on their collection. At the
// end (checker.CheckWebhooks) every committed record was delivered at
// least once, no delivery was for a record that was not committed, every
// signature verifies, and a delivery received twice has an election
// between its receipts; the duplicates are counted.
type Webhook struct {
	mu        sync.Mutex
	seq       map[int]int
	attempted map[string]bool
	acked     map[string]bool

	rc        *harness.WebhookReceiver
	stopWatch context.CancelFunc
	watched   chan struct{}
	elections []time.Time
}

// NewWebhook is the webhook workload.
func NewWebhook() *Webhook {
	return &Webhook{seq: map[int]int{}, attempted: map[string]bool{}, acked: map[string]bool{}}
}

func (w *Webhook) Name() string { return "webhook" }

func (w *Webhook) Setup(ctx context.Context, env *Env) error {
	host := "127.0.0.1"
	if env.Net != nil {
		host = env.Net.HostIP()
	}
	rc, err := harness.StartWebhookReceiver(host)
	if err != nil {
		return err
	}
	w.rc = rc
	env.T.Cleanup(func() { rc.Close() })
	l, err := env.C.WaitLeader(15 * time.Second)
	if err != nil {
		return err
	}
	admin := env.C.Admin(l)
	resp, err := admin.Do(ctx, "PATCH", "/api/v1/admin/settings", map[string]any{"hooks.http.allow": host})
	if err != nil || resp.Status != http.StatusOK {
		return fmt.Errorf("allow the receiver: %v %s", err, resp)
	}
	if err := createCollection(ctx, env, hookedCollection); err != nil {
		return err
	}
	// Attempts that fail (a receiver cut off) are retried every second
	// for a long while: the check is about what the cluster loses, not
	// about giving up.
	resp, err = admin.Do(ctx, "POST", "/api/v1/admin/webhooks", map[string]any{"url": rc.URL, "events": []string{"hooked.create"},
		"secret": webhookSecret, "retry_max": 25, "retry_backoff": "fixed", "retry_delay_ms": 1000, "timeout_ms": 5000})
	if err != nil || resp.Status != http.StatusCreated {
		return fmt.Errorf("create the webhook: %v %s", err, resp)
	}
	if err := waitAll(ctx, env, resp.Index()); err != nil {
		return err
	}
	watch, stop := context.WithCancel(context.Background())
	w.stopWatch, w.watched = stop, make(chan struct{})
	go w.watchTerms(watch, env)
	return nil
}

// watchTerms notes when each new term is first seen on any node (every
// 100 ms): the elections that may explain a duplicate delivery.
func (w *Webhook) watchTerms(ctx context.Context, env *Env) {
	defer close(w.watched)
	var last uint64
	for ctx.Err() == nil {
		for _, nd := range env.C.Running() {
			c, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
			st, err := env.C.AdminState(c, nd, false)
			cancel()
			if err == nil && st.Term > last {
				if last != 0 {
					w.mu.Lock()
					w.elections = append(w.elections, time.Now())
					w.mu.Unlock()
				}
				last = st.Term
			}
		}
		sleep(ctx, 100*time.Millisecond)
	}
}

func (w *Webhook) Step(ctx context.Context, wk *Worker) {
	nd := wk.Node()
	if nd == nil {
		time.Sleep(20 * time.Millisecond)
		return
	}
	w.mu.Lock()
	w.seq[wk.ID]++
	k := fmt.Sprintf("c%d-%d", wk.ID, w.seq[wk.ID])
	w.attempted[k] = true
	w.mu.Unlock()
	resp, err := wk.Client(nd).Do(context.Background(), "POST", "/api/v1/hooked", map[string]any{"k": k})
	switch {
	case transient(status(resp), err):
		wk.Done("create", Info)
	case resp.Status == http.StatusCreated:
		w.mu.Lock()
		w.acked[k] = true
		w.mu.Unlock()
		wk.Done("create", OK)
	default:
		wk.Errorf("%s POST hooked: %s", nd.Name, resp)
		time.Sleep(100 * time.Millisecond)
	}
}

// Check reads the committed records back, waits (two minutes at most)
// until each was delivered, and checks the receipts.
func (w *Webhook) Check(ctx context.Context, env *Env) Verdict {
	w.mu.Lock()
	acked := len(w.acked)
	w.mu.Unlock()
	v := Verdict{Acknowledged: acked}
	nodes := env.C.Running()
	if len(nodes) == 0 {
		return Verdict{Notes: []string{"no node runs"}}
	}
	committed, err := readKeys(ctx, env, nodes[0].Name)
	if err != nil {
		v.Notes = append(v.Notes, fmt.Sprintf("%s: final read: %v", nodes[0].Name, err))
		return v
	}
	w.mu.Lock()
	for k := range w.acked {
		if !committed[k] {
			v.Lost++
		}
	}
	attempted := make(map[string]bool, len(w.attempted))
	for k := range w.attempted {
		attempted[k] = true
	}
	w.mu.Unlock()
	history := func() checker.WebhookHistory {
		w.mu.Lock()
		defer w.mu.Unlock()
		return checker.WebhookHistory{Secret: webhookSecret, Receipts: w.rc.Receipts(), KeyField: "k", Committed: committed,
			Attempted: attempted, Elections: append([]time.Time(nil), w.elections...), Slack: 2 * time.Second}
	}
	start := time.Now()
	deadline := start.Add(2 * time.Minute)
	res := checker.CheckWebhooks(history())
	for len(res.Missing) > 0 && time.Now().Before(deadline) && ctx.Err() == nil {
		sleep(ctx, 500*time.Millisecond)
		res = checker.CheckWebhooks(history())
	}
	w.stopWatch()
	<-w.watched
	v.Duplicates = res.Duplicates
	v.Valid = res.Valid() && v.Lost == 0
	v.Notes = append(v.Notes, fmt.Sprintf("%d records committed; %s (the check waited %s for deliveries)",
		len(committed), res, time.Since(start).Round(time.Millisecond)))
	if len(res.Missing) > 0 {
		v.Notes = append(v.Notes, fmt.Sprintf("never delivered: %v", first(res.Missing, 10)))
	}
	if len(res.Unexpected) > 0 {
		v.Notes = append(v.Notes, fmt.Sprintf("delivered but not committed: %v", first(res.Unexpected, 10)))
	}
	if len(res.Unexplained) > 0 {
		v.Notes = append(v.Notes, fmt.Sprintf("received twice with no election between: %v", first(res.Unexplained, 10)))
		v.Notes = append(v.Notes, res.Why...)
	}
	return v
}

func first(list []string, n int) []string { return list[:min(n, len(list))] }

// readKeys lists every record of the hooked collection on node name.
func readKeys(ctx context.Context, env *Env, name string) (map[string]bool, error) {
	cl := env.C.Admin(env.C.Node(name))
	cl.Timeout = 30 * time.Second
	seen := map[string]bool{}
	cursor := ""
	for {
		resp, err := cl.Do(ctx, "GET", "/api/v1/hooked?perPage=500&cursor="+url.QueryEscape(cursor), nil)
		if err != nil {
			return nil, err
		}
		if resp.Status != http.StatusOK {
			return nil, fmt.Errorf("list: %s", resp)
		}
		var page struct {
			Data       []struct{ K string }
			NextCursor *string
		}
		if err := json.Unmarshal(resp.Body, &page); err != nil {
			return nil, err
		}
		for _, e := range page.Data {
			seen[e.K] = true
		}
		if page.NextCursor == nil || *page.NextCursor == "" {
			return seen, nil
		}
		cursor = *page.NextCursor
	}
}
