package webhooks

import (
	"context"
	"database/sql"
	"errors"

	"svcd/fsm"
)

// Delivery is one delivery as the API shows it (SPEC.md "Webhook
// delivery"): the outcome of its latest attempt, and when the next one is
// due while it has one.
type Delivery struct {
	ID        string `json:"id"`
	WebhookID string `json:"webhook_id"`
	Event     string `json:"event"`
	Status    string `json:"status"`
	// Attempt counts the attempts made (0 before the first).
	Attempt int64 `json:"attempt"`
	// ResponseStatus is the HTTP status of the latest attempt (nil when
	// it got none: not sent yet, or a network error).
	ResponseStatus *int64 `json:"response_status"`
	// ResponseBody holds the first 2 KB of its answer.
	ResponseBody string `json:"response_body"`
	Error        string `json:"error"`
	DurationMs   int64  `json:"duration_ms"`
	// NextAttemptAt is when the next attempt is due (unix seconds); nil
	// once succeeded or dead.
	NextAttemptAt *int64 `json:"next_attempt_at"`
	Created       int64  `json:"created"`
	Updated       int64  `json:"updated"`
}

// Limits of a deliveries page.
const (
	DefaultDeliveries = 50
	MaxDeliveries     = 500
)

const deliveryCols = `id, webhook_id, event, status, attempt, response_status, response_body, error, duration_ms,
	next_ms, created, updated`

func scanDelivery(scan func(dest ...any) error) (*Delivery, error) {
	var d Delivery
	var status, next int64
	if err := scan(&d.ID, &d.WebhookID, &d.Event, &d.Status, &d.Attempt, &status, &d.ResponseBody, &d.Error,
		&d.DurationMs, &next, &d.Created, &d.Updated); err != nil {
		return nil, err
	}
	if status != 0 {
		d.ResponseStatus = &status
	}
	if d.Status == statePending || d.Status == stateRetrying {
		at := (next + 999) / 1000
		d.NextAttemptAt = &at
	}
	return &d, nil
}

// Deliveries answers the deliveries of webhook id, newest first: at most
// limit (DefaultDeliveries when 0 or less, MaxDeliveries at most), and
// only those created at or after since (unix seconds) when since > 0.
func (m *Webhooks) Deliveries(ctx context.Context, id string, limit int, since int64) ([]*Delivery, error) {
	if !m.ready() {
		return nil, errNotMigrated
	}
	if limit <= 0 {
		limit = DefaultDeliveries
	}
	limit = min(limit, MaxDeliveries)
	out := []*Delivery{}
	err := m.core.Store().View(ctx, func(r *fsm.Reader) error {
		var n int
		if err := r.QueryRow(`SELECT count(*) FROM _svc_webhooks WHERE id = ?`, id).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return errNotFound
		}
		rows, err := r.Query(`SELECT `+deliveryCols+` FROM _svc_webhook_deliveries
			WHERE webhook_id = ? AND created >= ? ORDER BY seq DESC LIMIT ?`, id, since, limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			d, err := scanDelivery(rows.Scan)
			if err != nil {
				return err
			}
			out = append(out, d)
		}
		return rows.Err()
	})
	return out, err
}

// readDelivery reads delivery id (nil when there is none).
func (m *Webhooks) readDelivery(ctx context.Context, id string) (*Delivery, error) {
	var d *Delivery
	err := m.core.Store().View(ctx, func(r *fsm.Reader) error {
		var err error
		d, err = scanDelivery(r.QueryRow(`SELECT `+deliveryCols+` FROM _svc_webhook_deliveries WHERE id = ?`, id).Scan)
		if errors.Is(err, sql.ErrNoRows) {
			d, err = nil, nil
		}
		return err
	})
	return d, err
}
