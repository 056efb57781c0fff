package webhooks

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"svcd/engine/crypt"
	"svcd/fsm"
)

// How webhooks are read from the replica (store.go) and written by the
// state machine (crud.go).

// webhookCols is the column list scanWebhook reads.
const webhookCols = `id, url, events, secret, custom_headers, enabled, retry_max, retry_backoff,
	retry_delay_ms, timeout_ms, version, created, updated`

// scanWebhook scans one row of webhookCols; the secret stays as stored
// (sealed when the node has an encryption key).
func scanWebhook(scan func(dest ...any) error) (*Webhook, int64, error) {
	var w Webhook
	var events, headers string
	var version int64
	if err := scan(&w.ID, &w.URL, &events, &w.Secret, &headers, &w.Enabled, &w.RetryMax, &w.RetryBackoff,
		&w.RetryDelayMs, &w.TimeoutMs, &version, &w.Created, &w.Updated); err != nil {
		return nil, 0, err
	}
	if err := json.Unmarshal([]byte(events), &w.Events); err != nil {
		return nil, 0, fmt.Errorf("webhooks: events of %s: %w", w.ID, err)
	}
	if err := json.Unmarshal([]byte(headers), &w.CustomHeaders); err != nil {
		return nil, 0, fmt.Errorf("webhooks: custom headers of %s: %w", w.ID, err)
	}
	if w.Events == nil {
		w.Events = []string{}
	}
	if w.CustomHeaders == nil {
		w.CustomHeaders = map[string]string{}
	}
	return &w, version, nil
}

// readWebhook reads webhook id from the replica: nil when there is none.
func (m *Webhooks) readWebhook(ctx context.Context, id string) (*Webhook, int64, error) {
	if !m.ready() {
		return nil, 0, errNotMigrated
	}
	var w *Webhook
	var version int64
	err := m.core.Store().View(ctx, func(r *fsm.Reader) error {
		var err error
		w, version, err = scanWebhook(r.QueryRow(`SELECT `+webhookCols+` FROM _svc_webhooks WHERE id = ?`, id).Scan)
		if errors.Is(err, sql.ErrNoRows) {
			w, err = nil, nil
		}
		return err
	})
	return w, version, err
}

// readWebhooks reads every webhook, oldest first.
func (m *Webhooks) readWebhooks(ctx context.Context) ([]*Webhook, error) {
	if !m.ready() {
		return nil, errNotMigrated
	}
	out := []*Webhook{}
	err := m.core.Store().View(ctx, func(r *fsm.Reader) error {
		rows, err := r.Query(`SELECT ` + webhookCols + ` FROM _svc_webhooks ORDER BY created, id`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			w, _, err := scanWebhook(rows.Scan)
			if err != nil {
				return err
			}
			out = append(out, w)
		}
		return rows.Err()
	})
	return out, err
}

// sealSecret seals a secret for storage when the node has a key.
func (m *Webhooks) sealSecret(s string) (string, error) {
	if m.keyring == nil || crypt.IsSealed(s) {
		return s, nil
	}
	return m.keyring.Seal(s)
}

// openSecret is the secret as the admin gave it: sealed ones are opened
// (an error when this node lacks the key that sealed it).
func (m *Webhooks) openSecret(s string) (string, error) {
	if !crypt.IsSealed(s) {
		return s, nil
	}
	if m.keyring == nil {
		return "", errors.New("the webhook's secret is encrypted and this node has no encryption key")
	}
	plain, err := m.keyring.Open(s)
	if err != nil {
		return "", errors.New("the webhook's secret cannot be decrypted with this node's keys")
	}
	return plain, nil
}

// shown is w as an answer shows it: the secret opened when reveal, else
// masked.
func (m *Webhooks) shown(w *Webhook, reveal bool) *Webhook {
	if !reveal {
		return w.masked()
	}
	c := *w
	if plain, err := m.openSecret(w.Secret); err == nil {
		c.Secret = plain
	} else {
		c.Secret = ""
	}
	return &c
}
