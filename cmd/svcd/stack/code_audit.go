package stack

import (
	"context"
	"net/http"

	"svcd/engine/auth"
	"svcd/engine/jsvm"
)

// codeAuditor writes the audited writes of code (jsvm.CodeAudit) into the
// audit log: the actor is the code's id, the method "JS", the path the
// record's.
type codeAuditor struct{ admins *auth.Admins }

func (a codeAuditor) AuditCode(ctx context.Context, c jsvm.CodeAudit) error {
	method := map[string]string{"records.create": http.MethodPost, "records.update": http.MethodPatch, "records.delete": http.MethodDelete}[c.Action]
	return a.admins.Audit(ctx, auth.AuditEntry{
		ActorID: c.Via, Method: method, Path: "/api/v1/" + c.Target,
		Action: c.Action, Target: c.Target, Status: c.Status,
	})
}
