package engine

import (
	"maps"

	"svcd/fsm"
)

// Kernel exports for modules that change records inside their own
// commands with more than record.create and record.update carry
// (engine/files: a record created or updated together with the files it
// holds). The rule checks, the If-Match precondition and the record-write
// funnel stay the core's: a module only adds its own columns and rows.

// ReadEnv is the rule context of p's request for a check on this replica
// (a read: nothing of it is logged), with every part of the request a rule
// may read. A field's own rule (a file field's viewRule) is not among the
// collection's rules, so the context is not trimmed to what they mention.
func ReadEnv(p Principal, now int64) *RuleEnv {
	return &RuleEnv{Now: now, Method: p.Request.Method, Context: p.Request.Context, Auth: authFields(p),
		Headers: p.Request.Headers, Query: p.Request.Query}
}

// RuleHolds checks rule against record id of ci on this replica, as the
// state machine would check it in a transaction: an admin passes, null
// denies, "" admits everyone, an invalid rule denies.
func (rd *Reading) RuleHolds(ci *Coll, rule *string, admin bool, env *RuleEnv, id string) (bool, error) {
	if all, _, trivial := trivialRule(rule, admin); trivial {
		return all, nil
	}
	cond, all, none := ruleSQL(ci, rule, admin, rd.src.res, env.filterEnv(), nil)
	switch {
	case all:
		return true, nil
	case none:
		return false, nil
	}
	var n int
	err := rd.r.QueryRow("SELECT count(*) FROM "+ci.table+" AS _r WHERE "+cond.Where+" AND _r.id = ?", append(cond.Args, id)...).Scan(&n)
	return n > 0, err
}

// WriteRights answers whether p writes ci as an admin (rules bypassed), or
// ErrInsufficientScope for an API token without write scope on it.
func WriteRights(p Principal, ci *Coll) (admin bool, err error) { return writeRights(p, ci) }

// Writable returns collection name for a record write: ErrNotFound, or a
// 405 for a view collection.
func (rs *Records) Writable(name string) (*Coll, error) { return rs.writable(name) }

// ActorOf is p as the actor a command carries.
func ActorOf(p Principal) *Actor { return actorOf(p) }

// PrepareCreate validates body as p's create of a record of ci at now, as
// CreateRecord does (admin-only collections, scopes, every field), and
// sets the stored values of extra (fields a module fills, by name: a file
// field's names) where the create rule's @request.body sees them too. A
// required file field is checked on the names extra gives it.
func (rs *Records) PrepareCreate(p Principal, ci *Coll, body, extra map[string]any, now int64) (*RecordCreate, error) {
	admin, err := writeRights(p, ci)
	if err != nil {
		return nil, err
	}
	if !admin && ci.CreateRule == nil {
		return nil, ErrAdminOnly
	}
	id, values, verr := rs.prepareCreateWith(ci, body, extra, admin, now)
	if verr != nil {
		return nil, verr
	}
	in := body
	if len(extra) > 0 {
		in = maps.Clone(body)
		if in == nil {
			in = map[string]any{}
		}
		for i, f := range ci.fields {
			if v, ok := extra[f.Name]; ok {
				values[i], in[f.Name] = v, v
			}
		}
	}
	env := rs.e.envFor(p, ci, bodyEnv(ci, in, func(i int) any { return values[i] }), now)
	return &RecordCreate{cmd: recordCreateCmd{
		Coll: ci.ID, Ver: ci.Version, Admin: admin, ID: id, Now: now, Values: values, Env: env, Actor: actorOf(p),
	}}, nil
}

// ID is the id of the record c creates.
func (c *RecordCreate) ID() string { return c.cmd.ID }

// Admin reports whether c was prepared for a caller who bypasses rules.
func (c *RecordCreate) Admin() bool { return c.cmd.Admin }

// ApplyRecordCreateRow is ApplyRecordCreate answering the stored row.
func (rs *Records) ApplyRecordCreateRow(tx *fsm.Tx, ci *Coll, c *RecordCreate) ([]any, error) {
	c.cmd.Coll, c.cmd.Ver = ci.ID, ci.Version
	return rs.recordCreateIn(tx, ci, &c.cmd)
}

// RowForWrite reads record id of ci for a change by a caller (admin or
// decided by rule), at apply time: ErrNotFound when it does not exist or
// the caller may not view it, a 403 when rule refuses, a 412 when ifMatch
// is set and does not match. The row is as stored.
func (rs *Records) RowForWrite(tx *fsm.Tx, ci *Coll, id string, admin bool, rule *string, ifMatch string, env *RuleEnv) ([]any, error) {
	return rs.loadRowForWrite(tx, ci, id, admin, rule, ifMatch, env)
}

// Render is the record of row as a reader with admin rights (hidden
// fields shown) or without sees it, with its entity tag.
func (rs *Records) Render(ci *Coll, row []any, admin bool) *Record { return rs.record(ci, row, admin) }
