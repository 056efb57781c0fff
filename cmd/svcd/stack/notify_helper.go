package stack

import (
	"context"
	"encoding/json"

	"svcd/engine/jsvm"
	"svcd/engine/notify"
)

// notifier is engine/notify as helpers.notify reaches it: the module's
// own types in, SPEC.md's {inboxRowId, enqueued} out as JSON-like values
// (inboxRowId null when no row was written).
type notifier struct{ n *notify.Notifications }

func (w notifier) Notify(ctx context.Context, userID string, msg jsvm.NotifyMessage, o jsvm.NotifyOptions) (map[string]any, error) {
	res, err := w.n.Notify(ctx, userID, notify.Message{Title: msg.Title, Body: msg.Body, Data: msg.Data},
		notify.SendOptions{Providers: o.Providers, Inbox: o.Inbox, Push: o.Push})
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, err
	}
	if res.InboxRowID == "" {
		out["inboxRowId"] = nil // no row written (inbox: false)
	}
	return out, nil
}
