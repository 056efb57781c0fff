package webhooks

import (
	"context"
	"database/sql"
	"errors"

	"svcd/engine"
	"svcd/fsm"
)

// Completing: the outcome of each attempt is recorded through the log.
// A success ends the delivery (succeeded); a failure schedules the next
// attempt after the webhook's backoff (retrying), or ends it (dead) once
// the attempts reach retry_max. An outcome counts only while its claim
// holds (the same leader session and attempt number): an old leader's
// late outcome changes nothing. The same command drops finished
// deliveries older than webhooks.retention_days.

// maxBackoffMs caps the exponential backoff (SPEC.md: 24 hours).
const maxBackoffMs = 24 * 3600 * 1000

// pruneBatch bounds the deliveries one command drops.
const pruneBatch = 1000

// maxErrorLen bounds a recorded error message.
const maxErrorLen = 1000

type completeCmd struct {
	Claimer string    `json:"claimer"`
	NowMs   int64     `json:"now_ms"`
	Results []Outcome `json:"results,omitempty"`
	// PruneBefore (unix seconds, 0: none): finished deliveries last
	// updated before it are dropped.
	PruneBefore int64 `json:"prune_before,omitempty"`
}

// Complete records the outcomes of claimer's attempts.
func (m *Webhooks) Complete(ctx context.Context, claimer string, outcomes []Outcome) error {
	if len(outcomes) == 0 {
		return nil
	}
	for i := range outcomes {
		if len(outcomes[i].Error) > maxErrorLen {
			outcomes[i].Error = outcomes[i].Error[:maxErrorLen]
		}
		outcomes[i].Body = capture([]byte(outcomes[i].Body))
	}
	_, _, err := m.core.Propose(ctx, cmdComplete, completeCmd{Claimer: claimer, NowMs: m.core.Now().UnixMilli(), Results: outcomes})
	return err
}

// Prune drops finished deliveries past their retention, when there are
// any (a thousand per call).
func (m *Webhooks) Prune(ctx context.Context) error {
	if !m.ready() {
		return nil
	}
	before := m.core.Now().Unix() - m.retentionSeconds()
	var n int
	err := m.core.Store().View(ctx, func(r *fsm.Reader) error {
		return r.QueryRow(`SELECT count(*) FROM (SELECT 1 FROM _svc_webhook_deliveries
			WHERE status IN ('succeeded', 'dead') AND updated < ? LIMIT 1)`, before).Scan(&n)
	})
	if err != nil || n == 0 {
		return err
	}
	_, _, err = m.core.Propose(ctx, cmdComplete, completeCmd{NowMs: m.core.Now().UnixMilli(), PruneBefore: before})
	return err
}

// applyComplete records each outcome whose claim still holds, then
// prunes.
func (m *Webhooks) applyComplete(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[completeCmd](cmd)
	if err != nil {
		return nil, err
	}
	for _, r := range c.Results {
		if err := complete(tx, c.Claimer, c.NowMs, r); err != nil {
			return nil, err
		}
	}
	if c.PruneBefore > 0 {
		if _, err := tx.Exec(`DELETE FROM _svc_webhook_deliveries WHERE seq IN (SELECT seq FROM _svc_webhook_deliveries
			WHERE status IN ('succeeded', 'dead') AND updated < ? ORDER BY seq LIMIT ?)`, c.PruneBefore, pruneBatch); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// complete records one outcome.
func complete(tx *fsm.Tx, claimer string, nowMs int64, r Outcome) error {
	var status, holder, backoff string
	var attempt, retryMax, delay int64
	err := tx.QueryRow(`SELECT d.status, d.claimer, d.attempt, w.retry_max, w.retry_backoff, w.retry_delay_ms
		FROM _svc_webhook_deliveries d JOIN _svc_webhooks w ON w.id = d.webhook_id WHERE d.id = ?`, r.DeliveryID).
		Scan(&status, &holder, &attempt, &retryMax, &backoff, &delay)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	if claimer == "" || holder != claimer || attempt != r.Attempt || (status != statePending && status != stateRetrying) {
		return nil
	}
	next := int64(0)
	switch {
	case r.OK:
		status = stateSucceeded
	case attempt >= retryMax:
		status = stateDead
	default:
		status = stateRetrying
		next = nowMs + backoffMs(backoff, delay, attempt)
	}
	_, err = tx.Exec(`UPDATE _svc_webhook_deliveries SET status = ?, next_ms = ?, claimer = '', lease_ms = 0,
		response_status = ?, response_body = ?, error = ?, duration_ms = ?, updated = ? WHERE id = ?`,
		status, next, r.Status, r.Body, r.Error, r.DurationMs, nowMs/1000, r.DeliveryID)
	return err
}

// backoffMs is the wait after failed attempt number attempt: the delay
// each time (fixed), or the delay doubled after each attempt (exponential:
// delay, 2×delay, 4×delay, ...), capped at 24 hours.
func backoffMs(kind string, delay, attempt int64) int64 {
	if kind == backoffFixed || attempt <= 1 {
		return min(delay, maxBackoffMs)
	}
	d := delay
	for i := int64(1); i < attempt && d < maxBackoffMs; i++ {
		d *= 2
	}
	return min(d, maxBackoffMs)
}
