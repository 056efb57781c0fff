package webhooks

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"svcd/engine"
	"svcd/fsm"
)

// Claiming: before an attempt, the leader's dispatcher claims the
// delivery through the log, under the name of its leadership session
// (claimer) and with a lease of twice the webhook's timeout plus a minute
// (the dispatcher may hold a claimed delivery while a slot frees up). A
// delivery is due when it is pending (whatever the clock of the node that
// queued it said), or retrying and its next attempt time has come, and
// nobody holds a live claim on it: a claim by another
// session is a leader that is gone (its attempt may or may not have
// reached the receiver), so it is taken over at once; a claim of the
// same session is left alone until its lease runs out. Taking over a
// claim keeps the attempt's number: the attempt was never recorded.
// Deliveries of a disabled webhook wait (test deliveries excepted).

// leaseMargin is added to twice the webhook's timeout for a claim's
// lease.
const leaseMargin = 60_000

// claimCandidates bounds the due deliveries read for one claim.
const claimCandidates = 500

type claimCmd struct {
	Claimer string   `json:"claimer"`
	NowMs   int64    `json:"now_ms"`
	IDs     []string `json:"ids"`
}

type claimed struct {
	ID      string `json:"id"`
	Attempt int64  `json:"attempt"`
}

// claimResult lists the deliveries a claim got, with their attempt
// numbers.
type claimResult struct {
	Claimed []claimed `json:"claimed"`
}

// Attempt is one claimed delivery, ready to send (send.go).
type Attempt struct {
	// DeliveryID and WebhookID name it.
	DeliveryID, WebhookID string
	// Number is the attempt's number (1 for the first).
	Number int64

	event   string
	at      int64
	collID  string
	payload []byte
	url     string
	secret  string // as stored
	headers map[string]string
	timeout time.Duration
}

// Claim claims up to limit due deliveries for claimer, the name of this
// leader's session, in the order they fell due. take is asked, in that
// order, whether the dispatcher has room for one more attempt to a
// webhook (it counts what it accepts); deliveries it refuses stay due.
func (m *Webhooks) Claim(ctx context.Context, claimer string, limit int, take func(webhookID string) bool) ([]*Attempt, error) {
	if !m.ready() || limit <= 0 {
		return nil, nil
	}
	now := m.core.Now().UnixMilli()
	var ids []string
	err := m.core.Store().View(ctx, func(r *fsm.Reader) error {
		rows, err := r.Query(`SELECT d.id, d.webhook_id FROM _svc_webhook_deliveries d
			JOIN _svc_webhooks w ON w.id = d.webhook_id
			WHERE d.status IN ('pending', 'retrying') AND (d.status = 'pending' OR d.next_ms <= ?)
				AND (d.claimer = '' OR d.claimer <> ? OR d.lease_ms <= ?)
				AND (w.enabled = 1 OR d.event = ?)
			ORDER BY d.next_ms, d.seq LIMIT ?`, now, claimer, now, TestEvent, claimCandidates)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() && len(ids) < limit {
			var id, hook string
			if err := rows.Scan(&id, &hook); err != nil {
				return err
			}
			if take(hook) {
				ids = append(ids, id)
			}
		}
		return rows.Err()
	})
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	res, _, err := m.core.Propose(ctx, cmdClaim, claimCmd{Claimer: claimer, NowMs: now, IDs: ids})
	if err != nil {
		return nil, err
	}
	got, _ := res.(*claimResult)
	if got == nil || len(got.Claimed) == 0 {
		return nil, nil
	}
	return m.attempts(ctx, got.Claimed)
}

// attempts reads what sending the claimed deliveries needs.
func (m *Webhooks) attempts(ctx context.Context, list []claimed) ([]*Attempt, error) {
	out := make([]*Attempt, 0, len(list))
	err := m.core.Store().View(ctx, func(r *fsm.Reader) error {
		for _, c := range list {
			a := &Attempt{DeliveryID: c.ID, Number: c.Attempt}
			var payload, headers string
			var timeout int64
			err := r.QueryRow(`SELECT d.webhook_id, d.event, d.at, d.coll_id, d.payload, w.url, w.secret, w.custom_headers,
				w.timeout_ms FROM _svc_webhook_deliveries d JOIN _svc_webhooks w ON w.id = d.webhook_id WHERE d.id = ?`, c.ID).
				Scan(&a.WebhookID, &a.event, &a.at, &a.collID, &payload, &a.url, &a.secret, &headers, &timeout)
			if errors.Is(err, sql.ErrNoRows) {
				continue // deleted since: nothing to send
			}
			if err != nil {
				return err
			}
			if err := json.Unmarshal([]byte(headers), &a.headers); err != nil {
				return fmt.Errorf("webhooks: custom headers of %s: %w", a.WebhookID, err)
			}
			a.payload = []byte(payload)
			a.timeout = time.Duration(max(timeout, minTimeout)) * time.Millisecond
			out = append(out, a)
		}
		return nil
	})
	return out, err
}

// applyClaim claims each listed delivery that is still due at the
// command's time (see the top of this file).
func (m *Webhooks) applyClaim(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[claimCmd](cmd)
	if err != nil {
		return nil, err
	}
	out := &claimResult{Claimed: []claimed{}}
	for _, id := range c.IDs {
		var status, holder, event string
		var next, lease, attempt, timeout int64
		var enabled bool
		err := tx.QueryRow(`SELECT d.status, d.next_ms, d.claimer, d.lease_ms, d.attempt, d.event, w.timeout_ms, w.enabled
			FROM _svc_webhook_deliveries d JOIN _svc_webhooks w ON w.id = d.webhook_id WHERE d.id = ?`, id).
			Scan(&status, &next, &holder, &lease, &attempt, &event, &timeout, &enabled)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return nil, err
		}
		due := (status == statePending || status == stateRetrying && next <= c.NowMs) &&
			(holder == "" || holder != c.Claimer || lease <= c.NowMs) && (enabled || event == TestEvent)
		if !due {
			continue
		}
		if holder == "" {
			attempt++
		}
		if _, err := tx.Exec(`UPDATE _svc_webhook_deliveries SET claimer = ?, lease_ms = ?, attempt = ?, updated = ?
			WHERE id = ?`, c.Claimer, c.NowMs+2*max(timeout, minTimeout)+leaseMargin, attempt, c.NowMs/1000, id); err != nil {
			return nil, err
		}
		out.Claimed = append(out.Claimed, claimed{ID: id, Attempt: attempt})
	}
	return out, nil
}
