package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// pbEvent is one event of PocketBase's realtime stream: its name (the
// subscription string) and its data ({action, record}).
type pbEvent struct {
	name string
	data []byte
}

// pbStream is a PocketBase realtime stream (GET /api/realtime) of a
// caller, collecting its events.
type pbStream struct {
	client string
	mu     sync.Mutex
	events []pbEvent
	raw    []byte
	done   chan struct{}
	cancel func()
}

// openPBStream opens GET /api/realtime, with the caller's Authorization
// when streamAuth (the SDK's EventSource sends none: its subscription
// POST does), and waits for PB_CONNECT.
func (x *matrix) openPBStream(t *testing.T, c mcaller, streamAuth bool) *pbStream {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, x.s.URL+"/api/realtime", nil)
	if streamAuth {
		for k, v := range c.headers {
			req.Header.Set(k, v)
		}
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatalf("%s: open PocketBase stream: %v", c.name, err)
	}
	st := &pbStream{done: make(chan struct{}), cancel: cancel}
	connected := make(chan string, 1)
	go func() {
		defer close(st.done)
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		var name string
		for sc.Scan() {
			line := sc.Text()
			st.mu.Lock()
			st.raw = append(st.raw, line...)
			st.raw = append(st.raw, '\n')
			st.mu.Unlock()
			switch {
			case strings.HasPrefix(line, "event:"):
				name = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
			case strings.HasPrefix(line, "data:"):
				data := []byte(strings.TrimSpace(strings.TrimPrefix(line, "data:")))
				if name == "PB_CONNECT" {
					var v struct {
						ClientID string `json:"clientId"`
					}
					_ = json.Unmarshal(data, &v)
					connected <- v.ClientID
					continue
				}
				st.mu.Lock()
				st.events = append(st.events, pbEvent{name: name, data: data})
				st.mu.Unlock()
			}
		}
	}()
	select {
	case st.client = <-connected:
	case <-time.After(5 * time.Second):
		cancel()
		t.Fatalf("%s: no PB_CONNECT", c.name)
	}
	return st
}

// subscribe sets the stream's subscriptions as c (POST /api/realtime).
func (x *matrix) pbSubscribe(t *testing.T, c mcaller, st *pbStream, subs []string) {
	t.Helper()
	code, body, _ := x.get(t, c, http.MethodPost, "/api/realtime", map[string]any{"clientId": st.client, "subscriptions": subs}, nil)
	if code != http.StatusNoContent {
		t.Fatalf("%s: subscribe %v: %d %s", c.name, subs, code, body)
	}
}

// collected ends the stream and returns its events and raw text.
func (st *pbStream) collected() ([]pbEvent, []byte) {
	st.cancel()
	<-st.done
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.events, st.raw
}

// pbSubscriptions are a subscription to every record of every collection
// and one to each record by id.
func (x *matrix) pbSubscriptions() []string {
	var subs []string
	for _, coll := range matrixCollections() {
		subs = append(subs, coll+"/*")
		for _, rec := range matrixRecords[coll] {
			subs = append(subs, coll+"/"+x.id(coll, rec))
		}
	}
	return subs
}

// pbFilterSub is a subscription to pub with a filter, as the SDK writes
// its options.
func pbFilterSub(filter string) string {
	opts, _ := json.Marshal(map[string]any{"query": map[string]string{"filter": filter}})
	return "pub/*?options=" + url.QueryEscape(string(opts))
}

// pathPBRealtime: PocketBase's SSE realtime as every caller, both as the
// SDK subscribes (a stream without Authorization, subscriptions posted
// with it) and with the token on the stream too; each subscribes to every
// collection and to every record by id. After the owner touches every
// record, each stream must have received exactly the records the caller
// may view, once under the collection's subscription and once under the
// record's, with no value it may not see; and a filtered subscription
// must not deliver differently for a hidden value and a decoy.
func pathPBRealtime(t *testing.T, x *matrix) {
	probe := filterProbes[1]
	type streams struct{ sdk, authed, yes, no *pbStream }
	open := make([]streams, len(x.callers))
	subs := x.pbSubscriptions()
	for i, c := range x.callers {
		open[i] = streams{sdk: x.openPBStream(t, c, false), authed: x.openPBStream(t, c, true),
			yes: x.openPBStream(t, c, false), no: x.openPBStream(t, c, false)}
		x.pbSubscribe(t, c, open[i].sdk, subs)
		x.pbSubscribe(t, c, open[i].authed, subs)
		x.pbSubscribe(t, c, open[i].yes, []string{pbFilterSub(fmt.Sprintf(probe.expr, probe.target))})
		x.pbSubscribe(t, c, open[i].no, []string{pbFilterSub(fmt.Sprintf(probe.expr, "mdecoy"))})
	}
	x.touchAll(t, 3)
	time.Sleep(realtimeWait)
	for i, c := range x.callers {
		for kind, st := range map[string]*pbStream{"sdk stream": open[i].sdk, "authorized stream": open[i].authed} {
			events, raw := st.collected()
			x.leaks(t, c, "PocketBase realtime, "+kind, raw)
			x.checkPBEvents(t, c, kind, events)
		}
		yes, _ := open[i].yes.collected()
		no, _ := open[i].no.collected()
		if len(yes) != len(no) && !c.allowed(probe.target) {
			t.Errorf("LEAK %s via PocketBase realtime filter %q: %d events with the value, %d with a decoy: %s",
				c.name, probe.expr, len(yes), len(no), probe.target.label())
		}
	}
}

// checkPBEvents compares a stream's events with the model: every update
// of a record c may view arrives under "coll/*" and under "coll/id", and
// nothing else arrives.
func (x *matrix) checkPBEvents(t *testing.T, c mcaller, kind string, events []pbEvent) {
	t.Helper()
	got := map[string]int{}
	for _, e := range events {
		var d struct {
			Action string `json:"action"`
			Record struct {
				ID             string `json:"id"`
				CollectionName string `json:"collectionName"`
			} `json:"record"`
		}
		if err := json.Unmarshal(e.data, &d); err != nil {
			t.Errorf("%s (%s): event %s: %v: %s", c.name, kind, e.name, err, e.data)
			continue
		}
		key := x.keys[d.Record.ID]
		coll, rec, _ := strings.Cut(key, "/")
		if key == "" || d.Record.CollectionName != coll {
			continue // a record outside the fixture (scratch)
		}
		if !c.mayView(coll, rec) {
			t.Errorf("LEAK %s via PocketBase realtime (%s): %s %s of %s", c.name, kind, e.name, d.Action, key)
			continue
		}
		if e.name != coll+"/*" && e.name != coll+"/"+d.Record.ID {
			t.Errorf("%s (%s): %s delivered under %q", c.name, kind, key, e.name)
		}
		if d.Action == "update" {
			got[e.name]++
		}
	}
	for _, coll := range matrixCollections() {
		for _, rec := range matrixRecords[coll] {
			if !c.mayView(coll, rec) {
				continue
			}
			if n := got[coll+"/"+x.id(coll, rec)]; n != 1 {
				t.Errorf("%s (%s): %d updates of %s/%s under its record subscription, want 1", c.name, kind, n, coll, rec)
			}
		}
	}
	for _, coll := range matrixCollections() {
		want := 0
		for _, rec := range matrixRecords[coll] {
			if c.mayView(coll, rec) {
				want++
			}
		}
		if got[coll+"/*"] != want {
			t.Errorf("%s (%s): %d updates under %s/*, the rules admit %d", c.name, kind, got[coll+"/*"], coll, want)
		}
	}
}
