package queue

import (
	"encoding/json"
	"regexp"
)

// Job states (CONTRACT.md).
const (
	StateQueued    = "queued"
	StateRunning   = "running"
	StateSucceeded = "succeeded"
	StateDead      = "dead"
)

// States are the queue job states in their order of progress.
var States = []string{StateQueued, StateRunning, StateSucceeded, StateDead}

// Backoffs between the runs of a failing job.
const (
	BackoffExponential = "exponential"
	BackoffFixed       = "fixed"
)

// Job is a queue job as the admin API shows it. Times are unix seconds.
type Job struct {
	ID           string          `json:"id"`
	Queue        string          `json:"queue"`
	State        string          `json:"state"`
	Payload      json.RawMessage `json:"payload"`
	Attempt      int64           `json:"attempt"`
	Retries      int64           `json:"retries"`
	Backoff      string          `json:"backoff"`
	RetryDelayMs int64           `json:"retryDelayMs"`
	UniqueKey    *string         `json:"uniqueKey"`
	RunAfter     int64           `json:"runAfter"`
	ClaimedBy    *string         `json:"claimedBy"`
	ClaimUntil   *int64          `json:"claimUntil"`
	LastError    *string         `json:"lastError"`
	Result       json.RawMessage `json:"result"`
	Created      int64           `json:"created"`
	Updated      int64           `json:"updated"`
	Finished     *int64          `json:"finished"`
}

// jobCols are the columns scanJob reads, in its order.
const jobCols = `id, queue, state, payload, attempt, retries, backoff, retry_delay_ms, unique_key,
	run_after_ms, claimed_by, claim_until_ms, last_error, result, created_ms, updated_ms, finished_ms`

// scanJob reads one row of jobCols (from a replica read or inside an
// apply: nullable columns scan into any).
func scanJob(scan func(dest ...any) error) (*Job, error) {
	var (
		j                                               Job
		payload                                         string
		runAfter, created, upd                          int64
		uniqueKey, by, claimUntil, lastErr, result, fin any
	)
	if err := scan(&j.ID, &j.Queue, &j.State, &payload, &j.Attempt, &j.Retries, &j.Backoff, &j.RetryDelayMs,
		&uniqueKey, &runAfter, &by, &claimUntil, &lastErr, &result, &created, &upd, &fin); err != nil {
		return nil, err
	}
	j.Payload = json.RawMessage(payload)
	if r := anyString(result); r != nil {
		j.Result = json.RawMessage(*r)
	}
	j.UniqueKey, j.ClaimedBy, j.LastError = anyString(uniqueKey), anyString(by), anyString(lastErr)
	// A job due at once (dueNow) shows its creation time.
	j.RunAfter, j.Created, j.Updated = seconds(max(runAfter, created)), seconds(created), seconds(upd)
	j.ClaimUntil, j.Finished = anySeconds(claimUntil), anySeconds(fin)
	return &j, nil
}

// anyString is a nullable TEXT column scanned into any.
func anyString(v any) *string {
	switch x := v.(type) {
	case string:
		return &x
	case []byte:
		s := string(x)
		return &s
	}
	return nil
}

// anyInt is a nullable INTEGER column scanned into any.
func anyInt(v any) *int64 {
	switch x := v.(type) {
	case int64:
		return &x
	case float64:
		n := int64(x)
		return &n
	}
	return nil
}

// seconds turns unix milliseconds into the API's unix seconds.
func seconds(ms int64) int64 { return ms / 1000 }

// anySeconds is a nullable unix-milliseconds column as unix seconds.
func anySeconds(v any) *int64 {
	n := anyInt(v)
	if n == nil {
		return nil
	}
	s := seconds(*n)
	return &s
}

// queueName is the form of a queue's name.
var queueName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,63}$`)

// ValidQueueName reports whether name may name a queue: 1 to 64 letters,
// digits and _ . : - (not starting with one of the last three).
func ValidQueueName(name string) bool { return queueName.MatchString(name) }
