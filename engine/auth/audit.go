package auth

import (
	"context"

	"svcd/engine"
	"svcd/fsm"
)

// The audit log (SPEC.md): one replicated row per admin write, including
// the ones that failed.

// AuditEntry is one row of the audit log.
type AuditEntry struct {
	ID         int64  `json:"id"`
	ActorID    string `json:"actor_id"`
	ActorEmail string `json:"actor_email"`
	Method     string `json:"method"`
	Path       string `json:"path"`
	Action     string `json:"action"`
	Target     string `json:"target"`
	Status     int    `json:"status"`
	// IP is filled only when trusted proxies are configured.
	IP string `json:"ip"`
	At int64  `json:"at"`
}

type auditCmd struct {
	Entry AuditEntry `json:"entry"`
}

// Audit records one admin action (At set by the caller's clock).
func (ad *Admins) Audit(ctx context.Context, a AuditEntry) error {
	if a.At == 0 {
		a.At = ad.au.core.Now().Unix()
	}
	a.ID = 0
	_, _, err := ad.au.core.Propose(ctx, cmdAudit, auditCmd{Entry: a})
	return err
}

func (ad *Admins) applyAudit(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[auditCmd](cmd)
	if err != nil {
		return nil, err
	}
	a := c.Entry
	_, err = tx.Exec(`INSERT INTO _svc_audit (actor_id, actor_email, method, path, action, target, status, ip, at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, a.ActorID, a.ActorEmail, a.Method, a.Path, a.Action, a.Target, a.Status, a.IP, a.At)
	return nil, err
}

// AuditPage is one page of the audit log, newest first.
type AuditPage struct {
	Items      []AuditEntry `json:"items"`
	Page       int          `json:"page"`
	PerPage    int          `json:"perPage"`
	TotalItems int          `json:"totalItems"`
}

// MaxAuditPerPage bounds an audit log page (SPEC.md).
const MaxAuditPerPage = 500

// AuditLog reads a page of the audit log from this replica.
func (ad *Admins) AuditLog(ctx context.Context, page, perPage int) (*AuditPage, error) {
	if page < 1 {
		page = 1
	}
	if perPage < 1 {
		perPage = engine.DefaultPerPage
	}
	perPage = min(perPage, MaxAuditPerPage)
	out := &AuditPage{Items: []AuditEntry{}, Page: page, PerPage: perPage}
	err := ad.au.core.Store().View(ctx, func(r *fsm.Reader) error {
		if err := r.QueryRow(`SELECT count(*) FROM _svc_audit`).Scan(&out.TotalItems); err != nil {
			return err
		}
		rows, err := r.Query(`SELECT id, actor_id, actor_email, method, path, action, target, status, ip, at
			FROM _svc_audit ORDER BY id DESC LIMIT ? OFFSET ?`, perPage, (page-1)*perPage)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var a AuditEntry
			if err := rows.Scan(&a.ID, &a.ActorID, &a.ActorEmail, &a.Method, &a.Path, &a.Action, &a.Target, &a.Status, &a.IP, &a.At); err != nil {
				return err
			}
			out.Items = append(out.Items, a)
		}
		return rows.Err()
	})
	return out, err
}
