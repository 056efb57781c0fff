package scheduler

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// CodeRunner runs admin-authored JavaScript for the leader's loops: code
// is the body of an async function, vars the members of its ctx (each
// also bound as a name); it answers what the code returned. The runner
// applies execution.timeout_ms; the loops add a deadline of their own,
// the end of the claim the run holds, so a run never outlives its claim.
// The composition root passes engine/jsvm.
type CodeRunner interface {
	RunJob(ctx context.Context, code Code, vars map[string]any) (any, error)
}

// Code is one piece of admin-authored code as a loop runs it: its kind
// ("job" or "worker") and id name it in logs, history (via) and the
// audit, so what it writes is attributed to it.
type Code struct {
	Kind, ID, Source string
}

// settleTimeout bounds the proposal that records how a run ended. It does
// not depend on leadership: a run that ended is recorded even when the
// node stopped leading meanwhile (the proposal is forwarded).
const settleTimeout = 10 * time.Second

// runUntil runs code with vars under ctx, ending at until (zero: no end
// of its own). interrupted reports that the run ended because ctx did
// (leadership lost, shutdown): such a run is not recorded as failed; its
// claim expires and the reaper decides.
func runUntil(ctx context.Context, run CodeRunner, until time.Time, code Code, vars map[string]any) (res any, interrupted bool, err error) {
	rctx := ctx
	if !until.IsZero() {
		var cancel context.CancelFunc
		rctx, cancel = context.WithDeadline(ctx, until)
		defer cancel()
	}
	res, err = run.RunJob(rctx, code, vars)
	if err != nil && ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return nil, true, err
	}
	if err != nil && errors.Is(err, context.DeadlineExceeded) {
		err = errClaimEnded
	}
	return res, false, err
}

// errClaimEnded is a run stopped at the end of its claim.
var errClaimEnded = errors.New("the run was stopped at the end of its claim (queues.visibility_timeout_sec)")

// decodePayload is a job's JSON payload as code sees it.
func decodePayload(raw json.RawMessage) any {
	if len(raw) == 0 {
		return nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil
	}
	return v
}
