package queue

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"unicode/utf8"

	"svcd/engine"
	"svcd/fsm"
)

// Bounds of what a run leaves in its row.
const (
	// MaxResultBytes bounds the JSON a run's result keeps; a larger one is
	// not kept (the row says so in lastError).
	MaxResultBytes = 64 << 10
	// maxErrorBytes bounds an error message kept.
	maxErrorBytes = 2048
	// maxBackoffMs caps an exponential backoff (24 hours, as webhooks').
	maxBackoffMs = 24 * 3600 * 1000
)

// errStaleClaim is a completion for a run whose claim no longer stands
// (the reaper released it, another run holds it now, or the job ended).
var errStaleClaim = engine.Errorf(engine.KindConflict, "The job's claim no longer stands")

type completeCmd struct {
	ID      string          `json:"id"`
	Attempt int64           `json:"attempt"`
	OK      bool            `json:"ok"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   string          `json:"error,omitempty"`
	Now     int64           `json:"now"` // unix ms
}

// Complete ends run attempt of job id: succeeded with result when runErr
// is nil, else queued again after its backoff while retries remain, else
// dead. A completion for a claim that no longer stands changes nothing
// and answers a conflict.
func (q *Queue) Complete(ctx context.Context, id string, attempt int64, result any, runErr error) error {
	c := completeCmd{ID: id, Attempt: attempt, OK: runErr == nil, Now: q.core.Now().UnixMilli()}
	if runErr != nil {
		c.Error = clip(runErr.Error(), maxErrorBytes)
	} else {
		c.Result, c.Error = resultJSON(result)
	}
	_, _, err := q.core.Propose(ctx, cmdCompleteFromClaim, c)
	return err
}

// resultJSON is a run's result as kept: JSON text, or nothing and why.
func resultJSON(v any) (json.RawMessage, string) {
	if v == nil {
		return nil, ""
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, "the result was not kept: " + clip(err.Error(), 200)
	}
	if len(b) > MaxResultBytes {
		return nil, "the result was not kept: it is larger than 64 KiB"
	}
	return b, ""
}

// clip cuts s to at most n bytes, on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// BackoffMs is the delay before the run after failed run attempt (from
// 1): retryDelayMs each time when fixed, doubled for each earlier attempt
// when exponential, capped at 24 hours.
func BackoffMs(backoff string, retryDelayMs, attempt int64) int64 {
	d := retryDelayMs
	if backoff == BackoffExponential {
		for i := int64(1); i < attempt && d < maxBackoffMs; i++ {
			d *= 2
		}
	}
	return min(d, maxBackoffMs)
}

// retryBase is the time a failed attempt's backoff counts from: the
// completing worker's clock, but never later than the claim's end. The
// claim's end comes from the leader's clock (claim.go) and a completion
// is accepted only while the claim holds, so a worker whose clock runs
// ahead (the jepsen suite's clock-skew fault found one nine minutes
// ahead) does not push the retry that far into the future.
func retryBase(now, claimUntil int64) int64 {
	if claimUntil > 0 && claimUntil < now {
		return claimUntil
	}
	return now
}

// applyComplete applies a completion; fromClaim bounds the retry's
// backoff base by the claim's end (command 165; 92 does not).
func (q *Queue) applyComplete(tx *fsm.Tx, cmd fsm.Command, fromClaim bool) (any, error) {
	c, err := engine.DecodeCmd[completeCmd](cmd)
	if err != nil {
		return nil, err
	}
	var (
		state, queue, backoff        string
		attempt, retries, retryDelay int64
		claimUntil                   int64 // 0: none
	)
	err = tx.QueryRow(`SELECT state, queue, attempt, retries, backoff, retry_delay_ms, coalesce(claim_until_ms, 0) FROM _svc_queue_jobs WHERE id = ?`, c.ID).
		Scan(&state, &queue, &attempt, &retries, &backoff, &retryDelay, &claimUntil)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errJobNotFound
	}
	if err != nil {
		return nil, err
	}
	if state != StateRunning || attempt != c.Attempt {
		return nil, errStaleClaim
	}
	var errText any
	if c.Error != "" {
		errText = c.Error
	}
	switch {
	case c.OK:
		var result any
		if len(c.Result) > 0 {
			result = string(c.Result)
		}
		_, err = tx.Exec(`UPDATE _svc_queue_jobs SET state = 'succeeded', result = ?, last_error = coalesce(?, last_error),
			claimed_by = NULL, claim_until_ms = NULL, updated_ms = ?, finished_ms = ? WHERE id = ?`,
			result, errText, c.Now, c.Now, c.ID)
	case attempt <= retries:
		runAfter := int64(dueNow)
		if d := BackoffMs(backoff, retryDelay, attempt); d > 0 {
			base := c.Now
			if fromClaim {
				base = retryBase(c.Now, claimUntil)
			}
			runAfter = base + d
		}
		_, err = tx.Exec(`UPDATE _svc_queue_jobs SET state = 'queued', last_error = ?, run_after_ms = ?,
			claimed_by = NULL, claim_until_ms = NULL, updated_ms = ? WHERE id = ?`,
			errText, runAfter, c.Now, c.ID)
		tx.Emit(fsm.Event{Kind: evQueued, Subject: queue})
	default:
		_, err = tx.Exec(`UPDATE _svc_queue_jobs SET state = 'dead', last_error = ?,
			claimed_by = NULL, claim_until_ms = NULL, updated_ms = ?, finished_ms = ? WHERE id = ?`,
			errText, c.Now, c.Now, c.ID)
	}
	return nil, err
}
