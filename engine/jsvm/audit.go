package jsvm

import (
	"context"
	"encoding/json"
	"time"

	"svcd/engine"
)

// Writes made with more than the caller's rights are audited: a record
// write through helpers.asSystem() (or by code that acts as the system:
// jobs, queue workers, workflows) adds an entry to the audit log, its
// actor the code's id, so that what bypassed the rules is on record
// beside the admins' own actions. Writes made with the caller's rights
// are the caller's, and are not audited (record writes never are);
// history names the code that made them (via) either way.

// CodeAudit is one audited write of code.
type CodeAudit struct {
	// Via is the code's id (hook_..., route_..., a job's id).
	Via string
	// Action is records.create, records.update or records.delete;
	// Target is "<collection>/<id>".
	Action, Target string
	// Status is the HTTP status the write would have answered.
	Status int
}

// Auditor records an audited write (engine/auth's audit log, adapted by
// the composition root).
type Auditor interface {
	AuditCode(ctx context.Context, a CodeAudit) error
}

// audited records a write of the system principal (err: its failure).
func (h *helperSet) audited(action, coll, id string, status int, err error) {
	if !h.p.System || h.inv.m.auditor == nil {
		return
	}
	if err != nil {
		status = 500
		if de := engine.AsError(err); de != nil {
			status = kindStatus[de.Kind]
		}
	}
	target := coll
	if id != "" {
		target += "/" + id
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(h.inv.ctx), 10*time.Second)
	defer cancel()
	if aerr := h.inv.m.auditor.AuditCode(ctx, CodeAudit{Via: h.inv.id, Action: action, Target: target, Status: status}); aerr != nil {
		h.inv.m.log.Warn("jsvm: could not audit a write of code", "via", h.inv.id, "action", action, "err", aerr)
	}
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
