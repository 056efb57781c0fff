// Package notify is the engine's notifications module (SPEC.md
// "Notification collections", "Notifications", "Push provider
// behavior"): an inbox of notifications per user, the device tokens that
// users register for push, the push providers' settings, and push sends
// as queue jobs.
//
// The inbox and the device tokens are ordinary collections, created
// through the log the first time a push provider is enabled (the inbox
// also on its first use): svc_notifications and svc_device_tokens
// (collections.go). Their records change through the record commands of
// the core and, for the device endpoints, through the module's commands
// 130-132 (devices.go, dead.go), whose applies pass the core's
// record-write funnel, so history, the search index, realtime and every
// later record hook see them.
//
// A push is a queue job: Notify enqueues one independent job per enabled
// provider on that provider's built-in queue (notifications.<provider>),
// and the leader's dispatcher hands the job to HandleJob (job.go), so a
// send gets the queue's claims, retries with backoff, dead letters and
// reaper. The providers' wire protocols (FCM HTTP v1, APNs, the hosted
// provider's REST API) need net/http, which the engine never imports:
// they arrive through the Pusher interface this package declares, which
// the composition root implements with internal/push over the node's
// egress guard.
package notify

import (
	"context"
	"encoding/json"
	"log/slog"

	"svcd/engine"
)

// Pusher speaks the push providers' protocols (internal/push; the
// composition root passes it, its dials guarded by api/egress).
type Pusher interface {
	// Push sends msg through provider, configured by cfg (the provider's
	// settings by member name, secrets opened), to each target: device
	// tokens, or user ids for the hosted provider. It answers one outcome
	// per target, in order.
	Push(ctx context.Context, provider string, cfg map[string]string, msg PushMessage, targets []string) []PushOutcome
	// Probe checks that provider is reachable and accepts the credentials
	// of cfg, sending no notification; the error says what failed.
	Probe(ctx context.Context, provider string, cfg map[string]string) error
}

// PushMessage is one notification as a provider sends it.
type PushMessage struct {
	Title string
	Body  string
	// Data is sent along (FCM receives its values as strings).
	Data map[string]any
	// Key names the message across the retries of its job (the queue
	// job's id): providers collapse a message sent again into the one
	// shown before (FCM's notification tag, APNs' collapse id, the hosted
	// provider's idempotency key).
	Key string
}

// PushResult is what became of one send.
type PushResult int

// Outcomes of a send (SPEC.md "Push provider behavior").
const (
	// PushSent: the provider accepted it.
	PushSent PushResult = iota
	// PushDead: the provider reports the device token dead (FCM's
	// UNREGISTERED or 404, APNs' 410): the token is disabled.
	PushDead
	// PushRetry: a transient failure (5xx, 429, network): the job is
	// retried through the queue.
	PushRetry
	// PushDrop: a permanent failure (another 4xx): logged and dropped.
	PushDrop
)

// PushOutcome is one send's outcome and, for a failure, the provider's
// words.
type PushOutcome struct {
	Result PushResult
	Detail string
}

// Jobs enqueues push jobs (engine/queue, through the composition root).
type Jobs interface {
	Enqueue(ctx context.Context, queue string, payload json.RawMessage, retries, retryDelayMs int64) (jobID string, deduped bool, err error)
}

// Options are what the module needs besides the core.
type Options struct {
	// Push sends through the providers (nil: every send fails for now
	// and is retried; test-connection answers that push is unavailable).
	Push Pusher
	// Jobs enqueues push jobs (nil: Notify cannot push).
	Jobs Jobs
}

// Notifications is the module: the inbox, device tokens, providers and
// push sends.
type Notifications struct {
	core *engine.Engine
	push Pusher
	jobs Jobs
	log  *slog.Logger
}

// New wires the module to core: its settings, commands and results. Call
// it before core.Seal.
func New(core *engine.Engine, opts Options) *Notifications {
	n := &Notifications{core: core, push: opts.Push, jobs: opts.Jobs, log: core.Logger()}
	n.registerSettings()
	n.registerCommands()
	return n
}

// system is the principal of the module's own reads and writes of its
// collections: an admin (rules bypassed) with no id.
func system() engine.Principal {
	return engine.Principal{Kind: engine.AdminPrincipal, Role: engine.RoleOwner}
}

// Errors of the module.
var (
	errNotBootstrapped = engine.Errorf(engine.KindUnavailable,
		"Notifications are not set up yet: enable a push provider first (PATCH /api/v1/admin/notifications/providers/:name)")
	errUnknownProvider = engine.Errorf(engine.KindNotFound, "No such push provider: the providers are fcm, apns and hostedpush")
	errDeviceNotFound  = engine.Errorf(engine.KindNotFound, "No device with this token is registered to you")
	errNotAUser        = engine.Errorf(engine.KindForbidden, "Devices are registered by signed-in users")
	errNoPush          = engine.Errorf(engine.KindUnavailable, "Push sending is not available on this node")
)
