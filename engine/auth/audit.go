package auth

import (
	"context"
	"strings"
	"unicode/utf8"

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

// AuditPage is one page of the audit log, newest first: SPEC.md's list
// shape, {data, page, perPage, totalItems, totalPages}.
type AuditPage struct {
	Data       []AuditEntry `json:"data"`
	Page       int          `json:"page"`
	PerPage    int          `json:"perPage"`
	TotalItems int          `json:"totalItems"`
	TotalPages int          `json:"totalPages"`
}

// MaxAuditPerPage bounds an audit log page (SPEC.md); a larger perPage is
// clamped to it.
const MaxAuditPerPage = 500

// AuditQuery selects a page of the audit log. Zero values select
// everything: page 1 of engine.DefaultPerPage entries, any actor, any
// action, any time.
type AuditQuery struct {
	Page    int
	PerPage int
	// ActorID keeps the entries of this actor (admin id) only.
	ActorID string
	// ActionPrefix keeps the entries whose action starts with it
	// ("collections." for every collection action).
	ActionPrefix string
	// From and To (unix seconds, both inclusive) bound the entries' time.
	From, To *int64
}

// where is the query's WHERE clause (with its leading space) and its
// arguments.
func (q AuditQuery) where() (string, []any) {
	var conds []string
	var args []any
	if q.ActorID != "" {
		conds = append(conds, "actor_id = ?")
		args = append(args, q.ActorID)
	}
	if q.ActionPrefix != "" {
		// substr counts characters, as the prefix's length does here.
		conds = append(conds, "substr(action, 1, ?) = ?")
		args = append(args, utf8.RuneCountInString(q.ActionPrefix), q.ActionPrefix)
	}
	if q.From != nil {
		conds = append(conds, "at >= ?")
		args = append(args, *q.From)
	}
	if q.To != nil {
		conds = append(conds, "at <= ?")
		args = append(args, *q.To)
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

// AuditLog reads a page of the audit log from this replica, newest first.
// The HTTP layer refuses malformed parameters; here a page below 1 is the
// first, a perPage below 1 the default and one above MaxAuditPerPage the
// maximum.
func (ad *Admins) AuditLog(ctx context.Context, q AuditQuery) (*AuditPage, error) {
	page := max(q.Page, 1)
	perPage := q.PerPage
	if perPage < 1 {
		perPage = engine.DefaultPerPage
	}
	perPage = min(perPage, MaxAuditPerPage)
	out := &AuditPage{Data: []AuditEntry{}, Page: page, PerPage: perPage}
	where, args := q.where()
	err := ad.au.core.Store().View(ctx, func(r *fsm.Reader) error {
		if err := r.QueryRow(`SELECT count(*) FROM _svc_audit`+where, args...).Scan(&out.TotalItems); err != nil {
			return err
		}
		out.TotalPages = (out.TotalItems + perPage - 1) / perPage
		rows, err := r.Query(`SELECT id, actor_id, actor_email, method, path, action, target, status, ip, at
			FROM _svc_audit`+where+` ORDER BY id DESC LIMIT ? OFFSET ?`,
			append(args, perPage, int64(page-1)*int64(perPage))...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var a AuditEntry
			if err := rows.Scan(&a.ID, &a.ActorID, &a.ActorEmail, &a.Method, &a.Path, &a.Action, &a.Target, &a.Status, &a.IP, &a.At); err != nil {
				return err
			}
			out.Data = append(out.Data, a)
		}
		return rows.Err()
	})
	return out, err
}
