package engine

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"svcd/engine/filter"
	"svcd/fsm"
)

// RealtimeRecord is one record change as one principal may see it, for
// realtime delivery: the view rule has already admitted the principal.
type RealtimeRecord struct {
	e   *Engine
	ci  *Coll
	row []any
	p   Principal
	rec filter.Record
}

// RealtimeCollection resolves a collection name (any case) or id to the
// name the schema spells; "" when there is none.
func (e *Engine) RealtimeCollection(name string) string {
	if ci := e.Coll(name); ci != nil {
		return ci.Name
	}
	return ""
}

// RealtimeView checks ch against its collection's view rule as p (admins
// bypass rules; an API token needs read scope on the collection) with the
// in-memory evaluator, and returns the record as p may see it, or nil when
// p may not. A rule that reads other records (relations, @collection) is
// checked by the database against the current state (a record deleted
// since does not pass). A collection whose schema changed since the event
// (the row no longer fits it) denies.
func (e *Engine) RealtimeView(p Principal, ch *RecordChange) *RealtimeRecord {
	ci := e.Coll(ch.CollectionID)
	if ci == nil || len(ch.Row) != 3+len(ci.fields) || !p.reaches(ci.Name) {
		return nil
	}
	r := &RealtimeRecord{e: e, ci: ci, row: ch.Row, p: p, rec: ch.filterRecordFor(ci)}
	if p.bypasses(ci.Name, false) || brokenRuleCheck {
		return r
	}
	if ci.ViewRule == nil {
		return nil
	}
	if strings.TrimSpace(*ci.ViewRule) == "" {
		return r
	}
	rule := ci.viewRuleExpr()
	if rule == nil {
		return nil // a rule that does not parse admits nobody
	}
	if !r.holds(rule, e.recs.readEnv(p, true)) {
		return nil
	}
	return r
}

// holds evaluates ex against the record in memory; an expression that
// reads other records is answered by the database instead, against the
// replica's current state: the record must still exist and satisfy it.
func (r *RealtimeRecord) holds(ex filter.Expr, env *filter.Env) bool {
	ok, err := filter.Eval(ex, r.ci.filterColl(), r.rec, env)
	if errors.Is(err, filter.ErrNeedsDatabase) {
		return r.e.holdsNow(r.ci, ex, env, r.row[0])
	}
	return err == nil && ok
}

// realtimeReadWait bounds the database check of one event.
const realtimeReadWait = 2 * time.Second

func (e *Engine) holdsNow(ci *Coll, ex filter.Expr, env *filter.Env, id any) bool {
	c, err := filter.CompileSQL(ex, ci.filterColl(), e.schema.Load(), env, "_r")
	if err != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), realtimeReadWait)
	defer cancel()
	var n int
	err = e.store.View(ctx, func(rd *fsm.Reader) error {
		return rd.QueryRow("SELECT count(*) FROM "+ci.table+" AS _r WHERE "+c.Where+" AND _r.id = ?", append(c.Args, id)...).Scan(&n)
	})
	return err == nil && n > 0
}

// Match evaluates a subscriber's filter against the record, with what the
// principal may read (hidden fields only for admins); one that reads other
// records is checked by the database (see holds).
func (r *RealtimeRecord) Match(f filter.Expr) bool {
	return r.holds(f, r.e.recs.readEnv(r.p, false))
}

// Variant names the rendering: changes viewed with the same variant render
// the same JSON (hidden fields are for admins only), so a subscriber's
// frame can be reused for the next.
func (r *RealtimeRecord) Variant() int {
	if r.p.bypasses(r.ci.Name, false) {
		return 1
	}
	return 0
}

// JSON is the record as the principal may read it.
func (r *RealtimeRecord) JSON() []byte {
	return r.ci.appendRecord(make([]byte, 0, 256), r.row, r.p.bypasses(r.ci.Name, false), nil)
}

// filterRecord names a row's stored values for the in-memory evaluator.
// Private fields are left out: no filter may read them.
func filterRecord(ci *Coll, row []any) filter.Record {
	rec := make(filter.Record, 3+len(ci.fields))
	rec["id"] = row[0]
	if ci.hasCreated {
		rec["created"] = row[1]
	}
	if ci.hasUpdated {
		rec["updated"] = row[2]
	}
	for i, f := range ci.fields {
		if !f.private {
			rec[f.Name] = row[3+i]
		}
	}
	return rec
}

// viewRuleExpr is ci's view rule as parsed with the collection
// (rules_parsed.go); nil when it does not parse or is null.
func (ci *Coll) viewRuleExpr() filter.Expr {
	if ci.ViewRule == nil {
		return nil
	}
	ex, err := ci.parseRule(*ci.ViewRule)
	if err != nil {
		return nil
	}
	return ex
}

// RealtimeRetention is the replay window, realtime.retention_sec (default
// 30 s; values that are not positive integers count as unset).
func (e *Engine) RealtimeRetention() time.Duration {
	if n, err := strconv.Atoi(strings.TrimSpace(e.Setting("realtime.retention_sec"))); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	return 30 * time.Second
}
