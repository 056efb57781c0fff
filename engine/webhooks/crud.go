package webhooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"svcd/engine"
	"svcd/fsm"
)

// Admin CRUD of webhooks (SPEC.md "Webhooks (admin)"). Answers mask the
// secret unless the caller asks to reveal it; the answer to a create shows
// it, since the caller needs it to check signatures.

// saveCmd creates (Version 0) or replaces (the version it read) a
// webhook. Hook.Secret is as stored (sealed under the node's key).
type saveCmd struct {
	Hook    Webhook `json:"hook"`
	Version int64   `json:"version,omitempty"`
}

type deleteCmd struct {
	ID string `json:"id"`
}

// List answers every webhook, oldest first.
func (m *Webhooks) List(ctx context.Context, reveal bool) ([]*Webhook, error) {
	list, err := m.readWebhooks(ctx)
	if err != nil {
		return nil, err
	}
	for i, w := range list {
		list[i] = m.shown(w, reveal)
	}
	return list, nil
}

// Get answers webhook id.
func (m *Webhooks) Get(ctx context.Context, id string, reveal bool) (*Webhook, error) {
	w, _, err := m.readWebhook(ctx, id)
	if err != nil {
		return nil, err
	}
	if w == nil {
		return nil, errNotFound
	}
	return m.shown(w, reveal), nil
}

// Create validates body (a webhook's JSON without id) and creates it.
func (m *Webhooks) Create(ctx context.Context, body []byte) (*Webhook, uint64, error) {
	if !m.ready() {
		return nil, 0, errNotMigrated
	}
	w, err := newWebhook()
	if err != nil {
		return nil, 0, err
	}
	if err := w.apply(body); err != nil {
		return nil, 0, err
	}
	now := m.core.Now().Unix()
	w.Created, w.Updated = now, now
	plain := w.Secret
	if w.Secret, err = m.sealSecret(w.Secret); err != nil {
		return nil, 0, engine.Errorf(engine.KindInternal, "could not encrypt the secret")
	}
	_, idx, err := m.core.Propose(ctx, cmdSave, saveCmd{Hook: *w})
	if err != nil {
		return nil, idx, err
	}
	w.Secret = plain
	return w, idx, nil
}

// Update applies body (a partial webhook) to webhook id. The change
// applies only to the version it was made from; a concurrent save makes
// it read and apply again (three more times at most).
func (m *Webhooks) Update(ctx context.Context, id string, body []byte) (*Webhook, uint64, error) {
	for try := 0; ; try++ {
		w, version, err := m.readWebhook(ctx, id)
		if err != nil {
			return nil, 0, err
		}
		if w == nil {
			return nil, 0, errNotFound
		}
		if err := w.apply(body); err != nil {
			return nil, 0, err
		}
		w.Updated = max(m.core.Now().Unix(), w.Updated)
		if w.Secret, err = m.sealSecret(w.Secret); err != nil {
			return nil, 0, engine.Errorf(engine.KindInternal, "could not encrypt the secret")
		}
		_, idx, err := m.core.Propose(ctx, cmdSave, saveCmd{Hook: *w, Version: version})
		if errors.Is(err, errMoved) && try < 3 {
			continue
		}
		if err != nil {
			return nil, idx, err
		}
		return w.masked(), idx, nil
	}
}

// Delete deletes webhook id and its deliveries.
func (m *Webhooks) Delete(ctx context.Context, id string) (uint64, error) {
	if !m.ready() {
		return 0, errNotMigrated
	}
	_, idx, err := m.core.Propose(ctx, cmdDelete, deleteCmd{ID: id})
	return idx, err
}

// applySave writes the webhook and its patterns.
func (m *Webhooks) applySave(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[saveCmd](cmd)
	if err != nil {
		return nil, err
	}
	w := &c.Hook
	events, err := json.Marshal(w.Events)
	if err != nil {
		return nil, fmt.Errorf("%w: webhooks.save: %v", fsm.ErrHalt, err)
	}
	headers, err := json.Marshal(w.CustomHeaders)
	if err != nil {
		return nil, fmt.Errorf("%w: webhooks.save: %v", fsm.ErrHalt, err)
	}
	if c.Version == 0 {
		_, err = tx.Exec(`INSERT INTO _svc_webhooks (`+webhookCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)`,
			w.ID, w.URL, string(events), w.Secret, string(headers), w.Enabled, w.RetryMax, w.RetryBackoff,
			w.RetryDelayMs, w.TimeoutMs, w.Created, w.Updated)
		if engine.IsUniqueViolation(err) {
			return nil, engine.Errorf(engine.KindConflict, "A webhook with this id exists")
		}
		if err != nil {
			return nil, err
		}
	} else {
		res, err := tx.Exec(`UPDATE _svc_webhooks SET url = ?, events = ?, secret = ?, custom_headers = ?, enabled = ?,
			retry_max = ?, retry_backoff = ?, retry_delay_ms = ?, timeout_ms = ?, version = version + 1, updated = ?
			WHERE id = ? AND version = ?`,
			w.URL, string(events), w.Secret, string(headers), w.Enabled, w.RetryMax, w.RetryBackoff, w.RetryDelayMs,
			w.TimeoutMs, w.Updated, w.ID, c.Version)
		if err != nil {
			return nil, err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil, m.missingOrMoved(tx, w.ID)
		}
		if _, err := tx.Exec(`DELETE FROM _svc_webhook_patterns WHERE webhook_id = ?`, w.ID); err != nil {
			return nil, err
		}
	}
	for _, p := range w.Events {
		if _, err := tx.Exec(`INSERT INTO _svc_webhook_patterns (pattern, webhook_id) VALUES (?, ?)`, p, w.ID); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// missingOrMoved tells a webhook that is gone from one saved since it was
// read.
func (m *Webhooks) missingOrMoved(tx *fsm.Tx, id string) error {
	var n int
	if err := tx.QueryRow(`SELECT count(*) FROM _svc_webhooks WHERE id = ?`, id).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		return errNotFound
	}
	return errMoved
}

// applyDelete deletes the webhook, its patterns and its deliveries.
func (m *Webhooks) applyDelete(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[deleteCmd](cmd)
	if err != nil {
		return nil, err
	}
	res, err := tx.Exec(`DELETE FROM _svc_webhooks WHERE id = ?`, c.ID)
	if err != nil {
		return nil, err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil, errNotFound
	}
	if _, err := tx.Exec(`DELETE FROM _svc_webhook_patterns WHERE webhook_id = ?`, c.ID); err != nil {
		return nil, err
	}
	_, err = tx.Exec(`DELETE FROM _svc_webhook_deliveries WHERE webhook_id = ?`, c.ID)
	return nil, err
}
