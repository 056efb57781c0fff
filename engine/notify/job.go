package notify

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"svcd/engine"
	"svcd/fsm"
)

// Delivery is what one push through one provider did: a push job's
// result, and the test send's answer.
type Delivery struct {
	Provider string `json:"provider"`
	// Targets are the device tokens sent to (the user's enabled tokens of
	// the provider), or 1 for the hosted provider (the user id).
	Targets int `json:"targets"`
	Sent    int `json:"sent"`
	// Disabled counts the tokens reported dead, now disabled.
	Disabled int `json:"disabled"`
	// Dropped counts permanent failures (logged, not retried).
	Dropped int `json:"dropped"`
	// Retry counts transient failures: the job fails and is retried.
	Retry int `json:"retry"`
	// Errors are the providers' words for the failures (at most 5).
	Errors []string `json:"errors,omitempty"`
	// Skipped says why nothing was sent to anyone.
	Skipped string `json:"skipped,omitempty"`
}

// maxErrors bounds the failure messages a delivery keeps.
const maxErrors = 5

// maxTokens bounds the device tokens of one user and provider a push
// goes to (the most recently seen).
const maxTokens = 100

// Job is a push job as the leader's dispatcher hands it over.
type Job struct {
	ID      string
	Queue   string
	Attempt int64
	Payload json.RawMessage
}

// HandleJob runs a push job of a built-in queue (Queues): it sends the
// notification to the user's enabled device tokens of the queue's
// provider (the user id for the hosted provider), disables the tokens
// reported dead, logs the permanent failures, and fails when a send
// failed transiently, so the queue retries the job (every target again:
// the message's key, the job id, lets devices show it once).
func (n *Notifications) HandleJob(ctx context.Context, job Job) (any, error) {
	p := providerNamed(strings.TrimPrefix(job.Queue, "notifications."))
	if p == nil || Queue(p.name()) != job.Queue {
		return nil, fmt.Errorf("notifications: %s is not a push queue", job.Queue)
	}
	var pj pushJob
	if err := json.Unmarshal(job.Payload, &pj); err != nil || pj.User == "" {
		n.log.Warn("notifications: a push job's payload is not one; dropped", "queue", job.Queue, "job", job.ID)
		return &Delivery{Provider: p.name(), Skipped: "the payload is not a push job's {user, title, body, data}"}, nil
	}
	msg := PushMessage{Title: pj.Title, Body: pj.Body, Data: pj.Data, Key: job.ID}
	return n.deliver(ctx, p, pj.User, msg)
}

// deliver pushes msg to user through p; the error is set when sends
// failed transiently (the delivery says what happened to each).
func (n *Notifications) deliver(ctx context.Context, p provider, user string, msg PushMessage) (*Delivery, error) {
	d := &Delivery{Provider: p.name()}
	if !n.enabled(p) {
		d.Skipped = "the provider is not enabled"
		return d, nil
	}
	targets := []string{user}
	if p.devices() {
		var err error
		if targets, err = n.tokens(ctx, user, p.name()); err != nil {
			return d, err
		}
		if len(targets) == 0 {
			d.Skipped = "the user has no enabled device of this provider"
			return d, nil
		}
	}
	d.Targets = len(targets)
	if n.push == nil {
		return d, errNoPush
	}
	outs := n.push.Push(ctx, p.name(), n.config(p), msg, targets)
	var dead []string
	for i, t := range targets {
		o := PushOutcome{Result: PushRetry, Detail: "no answer"}
		if i < len(outs) {
			o = outs[i]
		}
		switch o.Result {
		case PushSent:
			d.Sent++
			continue
		case PushDead:
			d.Disabled++
			dead = append(dead, t)
		case PushDrop:
			d.Dropped++
			n.log.Warn("notifications: a push was refused; dropped", "provider", p.name(), "user", user, "reason", o.Detail)
		case PushRetry:
			d.Retry++
		}
		if len(d.Errors) < maxErrors && o.Detail != "" {
			d.Errors = append(d.Errors, o.Detail)
		}
	}
	if err := n.disableDead(ctx, p.name(), dead); err != nil {
		return d, fmt.Errorf("disable dead tokens: %w", err)
	}
	if d.Retry > 0 {
		return d, fmt.Errorf("%d of %d %s sends failed transiently: %s", d.Retry, d.Targets, p.name(), strings.Join(d.Errors, "; "))
	}
	return d, nil
}

// tokens are user's enabled device tokens of provider, the most recently
// seen first.
func (n *Notifications) tokens(ctx context.Context, user, provider string) ([]string, error) {
	ci := n.core.Coll(DevicesCollection)
	if ci == nil {
		return nil, nil
	}
	var out []string
	err := n.core.ReadAs(ctx, system(), func(rd *engine.Reading) error {
		return scanTokens(rd.SQL(), `SELECT token FROM `+ci.Table()+` WHERE "user" = ? AND provider = ? AND enabled = 1
			ORDER BY last_seen DESC, id LIMIT ?`, &out, user, provider, maxTokens)
	})
	return out, err
}

func scanTokens(r *fsm.Reader, q string, out *[]string, args ...any) error {
	rows, err := r.Query(q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return err
		}
		*out = append(*out, t)
	}
	return rows.Err()
}
