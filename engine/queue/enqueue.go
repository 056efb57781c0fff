package queue

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"math"

	"github.com/google/uuid"

	"svcd/engine"
	"svcd/fsm"
)

// Limits and defaults of an enqueue (SPEC.md's options; the numbers are
// svcd's, docs/jobs.md).
const (
	MaxPayloadBytes     = 256 << 10
	DefaultRetries      = 3
	MaxRetries          = 100
	DefaultRetryDelayMs = 1000
	MaxRetryDelayMs     = 24 * 3600 * 1000
	MaxDelaySeconds     = 365 * 24 * 3600
	MaxUniqueKeyLen     = 255
)

// EnqueueOptions are an enqueue's options (SPEC.md); a nil or empty one
// takes its default: no delay, no unique key, 3 retries, exponential
// backoff from 1000 ms.
type EnqueueOptions struct {
	// Delay (seconds, fractions allowed) before the first run.
	Delay *float64 `json:"delay"`
	// UniqueKey deduplicates among the queue's unfinished (queued or
	// running) jobs: enqueuing again answers the existing job.
	UniqueKey string `json:"uniqueKey"`
	// Retries is how many more runs a failing job gets.
	Retries *int64 `json:"retries"`
	// Backoff is "exponential" (the delay doubles with each retry, capped
	// at 24 hours) or "fixed".
	Backoff string `json:"backoff"`
	// RetryDelayMs is the delay before the first retry.
	RetryDelayMs *int64 `json:"retryDelayMs"`
}

// Enqueued is an enqueue's answer (CONTRACT.md: {jobId, deduped}).
type Enqueued struct {
	JobID   string `json:"jobId"`
	Deduped bool   `json:"deduped"`
}

// newJob is a queue job as a command carries it: every value resolved.
type newJob struct {
	ID           string          `json:"id"`
	Queue        string          `json:"queue"`
	Payload      json.RawMessage `json:"payload"`
	Retries      int64           `json:"retries"`
	Backoff      string          `json:"backoff"`
	RetryDelayMs int64           `json:"retry_delay_ms"`
	UniqueKey    string          `json:"unique_key,omitempty"`
	// RunAfterMs is when the job is due (unix ms), dueNow for at once.
	RunAfterMs int64 `json:"run_after_ms"`
}

// dueNow is the run_after of a job due at once, whatever the clock of the
// node that proposed it or of the leader that claims it (nodes' clocks
// differ; "now" on one may be the future on another).
const dueNow = 0

type enqueueCmd struct {
	Job newJob `json:"job"`
	Now int64  `json:"now"` // unix ms
}

// Enqueue adds a job to queue with payload (any JSON value; a
// json.RawMessage or []byte is taken as JSON text) and returns its id,
// and whether an unfinished job with the same unique key answered
// instead. It is the shape engine/jsvm's helpers.enqueue calls.
func (q *Queue) Enqueue(ctx context.Context, queue string, payload any, opts EnqueueOptions) (jobID string, deduped bool, err error) {
	raw, err := payloadJSON(payload)
	if err != nil {
		return "", false, err
	}
	res, _, err := q.EnqueueJSON(ctx, queue, raw, opts)
	if err != nil {
		return "", false, err
	}
	return res.JobID, res.Deduped, nil
}

// payloadJSON is payload as JSON text.
func payloadJSON(payload any) (json.RawMessage, error) {
	switch p := payload.(type) {
	case json.RawMessage:
		return p, nil
	case []byte:
		return json.RawMessage(p), nil
	}
	b, err := json.Marshal(payload)
	if err != nil {
		return nil, engine.FieldError("payload", "must be a JSON value: "+err.Error())
	}
	return b, nil
}

// EnqueueJSON is Enqueue with the payload as JSON text (empty: null),
// answering the log index too.
func (q *Queue) EnqueueJSON(ctx context.Context, queue string, payload json.RawMessage, opts EnqueueOptions) (*Enqueued, uint64, error) {
	now := q.core.Now().UnixMilli()
	j, err := q.resolveJob(queue, payload, opts, now)
	if err != nil {
		return nil, 0, err
	}
	v, idx, err := q.core.Propose(ctx, cmdEnqueue, enqueueCmd{Job: *j, Now: now})
	if err != nil {
		return nil, idx, err
	}
	return v.(*Enqueued), idx, nil
}

// resolveJob validates an enqueue and resolves its defaults, id and due
// time.
func (q *Queue) resolveJob(queue string, payload json.RawMessage, opts EnqueueOptions, now int64) (*newJob, error) {
	bad := map[string]string{}
	if !ValidQueueName(queue) {
		bad["queue"] = "must be 1 to 64 letters, digits and _ . : - (starting with a letter, digit or _)"
	}
	if len(payload) == 0 {
		payload = json.RawMessage("null")
	}
	if len(payload) > MaxPayloadBytes {
		bad["payload"] = "must be at most 256 KiB of JSON"
	} else if !json.Valid(payload) {
		bad["payload"] = "must be a JSON value"
	} else {
		payload = compact(payload)
	}
	j := &newJob{ID: uuid.NewString(), Queue: queue, Payload: payload, Retries: DefaultRetries,
		Backoff: BackoffExponential, RetryDelayMs: DefaultRetryDelayMs, UniqueKey: opts.UniqueKey, RunAfterMs: dueNow}
	if opts.Delay != nil {
		d := *opts.Delay
		if math.IsNaN(d) || d < 0 || d > MaxDelaySeconds {
			bad["delay"] = "must be a number of seconds from 0 to 31536000"
		} else if ms := int64(math.Round(d * 1000)); ms > 0 {
			j.RunAfterMs = now + ms
		}
	}
	if len(opts.UniqueKey) > MaxUniqueKeyLen {
		bad["uniqueKey"] = "must be at most 255 bytes"
	}
	if opts.Retries != nil {
		if *opts.Retries < 0 || *opts.Retries > MaxRetries {
			bad["retries"] = "must be an integer from 0 to 100"
		}
		j.Retries = *opts.Retries
	}
	switch opts.Backoff {
	case "":
	case BackoffExponential, BackoffFixed:
		j.Backoff = opts.Backoff
	default:
		bad["backoff"] = `must be "exponential" or "fixed"`
	}
	if opts.RetryDelayMs != nil {
		if *opts.RetryDelayMs < 0 || *opts.RetryDelayMs > MaxRetryDelayMs {
			bad["retryDelayMs"] = "must be an integer from 0 to 86400000"
		}
		j.RetryDelayMs = *opts.RetryDelayMs
	}
	if len(bad) > 0 {
		return nil, engine.ValidationError(bad)
	}
	return j, nil
}

// compact is valid JSON text without insignificant space.
func compact(raw json.RawMessage) json.RawMessage {
	var out bytes.Buffer
	out.Grow(len(raw))
	if err := json.Compact(&out, raw); err != nil {
		return raw
	}
	return json.RawMessage(out.Bytes())
}

func (q *Queue) applyEnqueue(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[enqueueCmd](cmd)
	if err != nil {
		return nil, err
	}
	return insertJob(tx, &c.Job, c.Now)
}

// insertJob adds j, or answers the unfinished job of its queue with its
// unique key (deduped), or the job with its id when this very command was
// applied already (a proposal repeated after a lost answer).
func insertJob(tx *fsm.Tx, j *newJob, now int64) (*Enqueued, error) {
	var id string
	if j.UniqueKey != "" {
		err := tx.QueryRow(`SELECT id FROM _svc_queue_jobs WHERE queue = ? AND unique_key = ?
			AND state IN ('queued', 'running')`, j.Queue, j.UniqueKey).Scan(&id)
		switch {
		case err == nil:
			return &Enqueued{JobID: id, Deduped: id != j.ID}, nil
		case !errors.Is(err, sql.ErrNoRows):
			return nil, err
		}
	}
	err := tx.QueryRow(`SELECT id FROM _svc_queue_jobs WHERE id = ?`, j.ID).Scan(&id)
	switch {
	case err == nil:
		return &Enqueued{JobID: id}, nil
	case !errors.Is(err, sql.ErrNoRows):
		return nil, err
	}
	var uk any
	if j.UniqueKey != "" {
		uk = j.UniqueKey
	}
	if _, err := tx.Exec(`INSERT INTO _svc_queue_jobs (id, queue, state, payload, attempt, retries, backoff,
		retry_delay_ms, unique_key, run_after_ms, created_ms, updated_ms) VALUES (?, ?, 'queued', ?, 0, ?, ?, ?, ?, ?, ?, ?)`,
		j.ID, j.Queue, string(j.Payload), j.Retries, j.Backoff, j.RetryDelayMs, uk, j.RunAfterMs, now, now); err != nil {
		return nil, err
	}
	tx.Emit(fsm.Event{Kind: evQueued, Subject: j.Queue})
	return &Enqueued{JobID: j.ID}, nil
}
