package webhooks

import (
	"context"
	"encoding/json"
	"time"

	"svcd/engine"
	"svcd/fsm"
)

// Custom events (SPEC.md: "Custom events come from
// helpers.webhooks.dispatch(event, data)") and test deliveries go through
// the same outbox as record events, in a command of their own.

// TestEvent is the event of a test delivery.
const TestEvent = "webhook.test"

// maxData bounds the JSON of a custom event's data.
const maxData = 256 << 10

// dispatchCmd queues event to the webhooks whose patterns match it, or,
// with Webhook set, a test delivery to that webhook alone (whatever its
// patterns, enabled or not).
type dispatchCmd struct {
	Event   string          `json:"event"`
	Data    json.RawMessage `json:"data"`
	At      int64           `json:"at"`
	Webhook string          `json:"webhook,omitempty"`
}

// dispatchResult lists the deliveries a dispatch queued.
type dispatchResult struct {
	IDs []string `json:"ids"`
}

// Dispatch queues custom event with data (any JSON value) to every
// enabled webhook whose patterns match it: the JavaScript helper
// webhooks.dispatch. The deliveries are committed when it returns.
func (m *Webhooks) Dispatch(ctx context.Context, event string, data any) error {
	_, _, err := m.DispatchEvent(ctx, event, data)
	return err
}

// DispatchEvent is Dispatch answering the ids of the deliveries queued
// (none when no webhook matches) and the log index.
func (m *Webhooks) DispatchEvent(ctx context.Context, event string, data any) ([]string, uint64, error) {
	if msg := checkEventName(event); msg != "" {
		return nil, 0, engine.FieldError("event", msg)
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return nil, 0, engine.FieldError("data", "must be a JSON value")
	}
	if len(raw) > maxData {
		return nil, 0, engine.FieldError("data", "must be at most 256 KiB of JSON")
	}
	return m.dispatch(ctx, dispatchCmd{Event: event, Data: raw, At: m.core.Now().Unix()})
}

func (m *Webhooks) dispatch(ctx context.Context, c dispatchCmd) ([]string, uint64, error) {
	if !m.ready() {
		return nil, 0, errNotMigrated
	}
	res, idx, err := m.core.Propose(ctx, cmdDispatch, c)
	if err != nil {
		return nil, idx, err
	}
	out, _ := res.(*dispatchResult)
	if out == nil {
		return nil, idx, nil
	}
	return out.IDs, idx, nil
}

// Test queues a synthetic delivery (event webhook.test) to webhook id,
// enabled or not, and waits for its first attempt (at most the webhook's
// timeout and ten seconds more, or until ctx ends): the delivery as it
// then stands.
func (m *Webhooks) Test(ctx context.Context, id string) (*Delivery, uint64, error) {
	w, _, err := m.readWebhook(ctx, id)
	if err != nil {
		return nil, 0, err
	}
	if w == nil {
		return nil, 0, errNotFound
	}
	data, _ := json.Marshal(map[string]any{"webhook_id": id, "message": "This is a test delivery."})
	ids, idx, err := m.dispatch(ctx, dispatchCmd{Event: TestEvent, Data: data, At: m.core.Now().Unix(), Webhook: id})
	if err != nil {
		return nil, idx, err
	}
	if len(ids) != 1 {
		return nil, idx, engine.Errorf(engine.KindInternal, "the test delivery was not queued")
	}
	wait, cancel := context.WithTimeout(ctx, time.Duration(w.TimeoutMs)*time.Millisecond+10*time.Second)
	defer cancel()
	for {
		d, err := m.readDelivery(ctx, ids[0])
		if err != nil {
			return nil, idx, err
		}
		if d == nil {
			return nil, idx, errNotFound
		}
		if d.Status != statePending {
			return d, idx, nil
		}
		select {
		case <-wait.Done():
			return d, idx, nil
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// applyDispatch queues the deliveries of a custom event or a test.
func (m *Webhooks) applyDispatch(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[dispatchCmd](cmd)
	if err != nil {
		return nil, err
	}
	hooks := []string{c.Webhook}
	if c.Webhook == "" {
		if hooks, err = matching(tx, c.Event); err != nil {
			return nil, err
		}
	} else {
		var n int
		if err := tx.QueryRow(`SELECT count(*) FROM _svc_webhooks WHERE id = ?`, c.Webhook).Scan(&n); err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, errNotFound
		}
	}
	out := &dispatchResult{IDs: []string{}}
	data := c.Data
	if len(data) == 0 {
		data = json.RawMessage("null")
	}
	for _, h := range hooks {
		id, err := queueDelivery(tx, h, c.Event, "", c.At, data)
		if err != nil {
			return nil, err
		}
		out.IDs = append(out.IDs, id)
	}
	return out, nil
}
