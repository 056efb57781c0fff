package notify

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"svcd/engine"
)

// Message is a notification (SPEC.md: notify(userId, {title, body,
// data?}, ...)).
type Message struct {
	Title string         `json:"title"`
	Body  string         `json:"body"`
	Data  map[string]any `json:"data,omitempty"`
}

// SendOptions are notify's options; the zero value writes the inbox row
// and pushes through every enabled provider.
type SendOptions struct {
	// Providers limits the push to these providers (nil: every enabled
	// one). A named provider that is not enabled is skipped.
	Providers []string `json:"providers,omitempty"`
	// Inbox: false writes no inbox row (nil: true).
	Inbox *bool `json:"inbox,omitempty"`
	// Push: false enqueues no push job (nil: true).
	Push *bool `json:"push,omitempty"`
}

// Enqueued is one push job Notify enqueued.
type Enqueued struct {
	Provider string `json:"provider"`
	JobID    string `json:"jobId"`
	Deduped  bool   `json:"deduped"`
}

// Result is what Notify answers (SPEC.md: {inboxRowId, enqueued}).
// InboxRowID is empty when no inbox row was written.
type Result struct {
	InboxRowID string     `json:"inboxRowId"`
	Enqueued   []Enqueued `json:"enqueued"`
}

// pushJob is a push job's payload.
type pushJob struct {
	User  string         `json:"user"`
	Title string         `json:"title,omitempty"`
	Body  string         `json:"body,omitempty"`
	Data  map[string]any `json:"data,omitempty"`
	// Inbox is the inbox row the push announces ("" without one).
	Inbox string `json:"inbox,omitempty"`
}

// Notify notifies user userID (a user of the notification collections'
// auth collection): it writes an inbox row (its type is data.type when
// that is a string) unless opts.Inbox is false, creating the inbox on
// first use, and enqueues one independent push job per enabled provider
// (of opts.Providers, when given) unless opts.Push is false. It is the Go
// face of the helpers' notify (engine/jsvm).
func (n *Notifications) Notify(ctx context.Context, userID string, msg Message, opts SendOptions) (*Result, error) {
	push := opts.Push == nil || *opts.Push
	inbox := opts.Inbox == nil || *opts.Inbox
	targets, err := n.checkMessage(userID, msg, opts.Providers, "providers")
	if err != nil {
		return nil, err
	}
	if err := n.checkUser(ctx, userID); err != nil {
		return nil, err
	}
	out := &Result{Enqueued: []Enqueued{}}
	if inbox {
		if out.InboxRowID, err = n.writeInbox(ctx, userID, msg); err != nil {
			return nil, err
		}
	}
	if !push {
		return out, nil
	}
	if len(targets) > 0 && n.jobs == nil {
		return out, errNoPush
	}
	payload, err := json.Marshal(pushJob{User: userID, Title: msg.Title, Body: msg.Body, Data: msg.Data, Inbox: out.InboxRowID})
	if err != nil {
		return nil, err
	}
	retries, delay := n.retryPolicy()
	for _, p := range targets {
		id, deduped, err := n.jobs.Enqueue(ctx, Queue(p.name()), payload, retries, delay)
		if err != nil {
			return out, fmt.Errorf("enqueue the %s push: %w", p.name(), err)
		}
		out.Enqueued = append(out.Enqueued, Enqueued{Provider: p.name(), JobID: id, Deduped: deduped})
	}
	return out, nil
}

// checkMessage validates a notification and its providers (named by the
// member field in errors) and answers the enabled providers to push
// through.
func (n *Notifications) checkMessage(userID string, msg Message, names []string, field string) ([]provider, error) {
	bad := map[string]string{}
	if strings.TrimSpace(userID) == "" {
		bad["userId"] = "is required"
	}
	switch {
	case msg.Title == "" && msg.Body == "":
		bad["title"] = "a notification needs a title or a body"
	case utf8.RuneCountInString(msg.Title) > MaxTitleChars:
		bad["title"] = fmt.Sprintf("must be at most %d characters", MaxTitleChars)
	}
	if utf8.RuneCountInString(msg.Body) > MaxBodyChars {
		bad["body"] = fmt.Sprintf("must be at most %d characters", MaxBodyChars)
	}
	if msg.Data != nil {
		if b, err := json.Marshal(msg.Data); err != nil {
			bad["data"] = "must be a JSON object"
		} else if len(b) > MaxDataBytes {
			bad["data"] = fmt.Sprintf("must be at most %d bytes of JSON", MaxDataBytes)
		}
	}
	var targets []provider
	if names == nil {
		targets = n.enabledProviders()
	} else {
		seen := map[string]bool{}
		for _, name := range names {
			p := providerNamed(name)
			switch {
			case p == nil:
				bad[field] = fmt.Sprintf("unknown provider %q: one of %s", name, strings.Join(Names(), ", "))
			case !seen[name] && n.enabled(p):
				targets = append(targets, p)
			}
			seen[name] = true
		}
	}
	if len(bad) > 0 {
		return nil, engine.ValidationError(bad)
	}
	return targets, nil
}

// checkUser refuses a user id that is not a user of the auth collection
// the notification collections belong to (when that collection exists).
func (n *Notifications) checkUser(ctx context.Context, userID string) error {
	var users string
	if ci := n.core.Coll(DevicesCollection); ci != nil {
		users = devicesUsers(ci)
	} else if ci := n.core.Coll(InboxCollection); ci != nil {
		if f := ci.Field("user"); f != nil {
			users = f.Collection
		}
	} else {
		users = n.usersCollection()
	}
	if n.core.Coll(users) == nil {
		return nil // no users yet: the inbox, if asked for, says why
	}
	if _, err := n.core.Records().GetRecord(ctx, system(), users, userID, "id", ""); err != nil {
		if de := engine.AsError(err); de != nil && de.Kind == engine.KindNotFound {
			return engine.FieldError("userId", "no such user")
		}
		return err
	}
	return nil
}

// writeInbox creates the inbox row of msg for userID (and the inbox, on
// first use) and answers its id.
func (n *Notifications) writeInbox(ctx context.Context, userID string, msg Message) (string, error) {
	if _, err := n.ensure(ctx, InboxCollection); err != nil {
		return "", err
	}
	typ, _ := msg.Data["type"].(string)
	row := map[string]any{"user": userID, "type": typ, "title": msg.Title, "body": msg.Body}
	if msg.Data != nil {
		row["data"] = msg.Data
	}
	body, err := json.Marshal(row)
	if err != nil {
		return "", err
	}
	rec, _, err := n.core.Records().CreateRecord(ctx, system(), InboxCollection, body)
	if err != nil {
		return "", err
	}
	var id struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(rec.JSON, &id); err != nil {
		return "", err
	}
	return id.ID, nil
}

// Queue is the built-in queue of provider's push jobs.
func Queue(provider string) string { return "notifications." + provider }

// Queues are the built-in queues of every provider (engine/queue's
// Options.Builtin).
func Queues() []string {
	var out []string
	for _, name := range Names() {
		out = append(out, Queue(name))
	}
	return out
}
