package engine

import (
	"strings"
	"time"

	"svcd/engine/filter"
	"svcd/engine/schema"
	"svcd/fsm"
)

// RequestInfo is what rules may read of the HTTP request (@request.*).
type RequestInfo struct {
	Method string
	// Headers use lower-case names with '-' as '_'. Credentials
	// (authorization, cookie, x-setup-key) are never kept.
	Headers map[string]string
	Query   map[string]string
	Context string
}

// RuleEnv is the request-time context of a rule (@request.*), captured
// into a command so the state machine evaluates the rule with the values
// of the request that proposed it, identically on every node.
type RuleEnv struct {
	Now     int64             `json:"now"`
	Method  string            `json:"method,omitempty"`
	Context string            `json:"context,omitempty"`
	Auth    map[string]any    `json:"auth,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	Query   map[string]string `json:"query,omitempty"`
	Body    map[string]any    `json:"body,omitempty"`
}

// filterEnv is the environment of a rule check: rules are written by
// admins, so they may read hidden fields and any collection.
func (r *RuleEnv) filterEnv() *filter.Env {
	if r == nil {
		return &filter.Env{AllowHidden: true}
	}
	return &filter.Env{
		Now: time.Unix(r.Now, 0).UTC(), Method: r.Method, Context: r.Context, Auth: r.Auth,
		Headers: r.Headers, Query: r.Query, Body: r.Body, AllowHidden: true,
	}
}

// authFields is what @request.auth.* sees of the caller.
func authFields(p Principal) map[string]any {
	if p.Kind == Anonymous {
		return nil
	}
	m := map[string]any{"id": p.ID, "collectionName": p.Collection}
	if p.Email != "" {
		m["email"] = p.Email
	}
	for k, v := range p.AuthRecord {
		m[k] = v
	}
	return m
}

// envFor captures the context a rule needs; only the parts of the request
// the collection's rules mention are kept, so the log holds no more of the
// request than it must.
func (e *Engine) envFor(p Principal, ci *Coll, body map[string]any, now int64) *RuleEnv {
	env := &RuleEnv{Now: now, Method: p.Request.Method, Context: p.Request.Context, Auth: authFields(p)}
	if ci.rulesUse.headers {
		env.Headers = p.Request.Headers
	}
	if ci.rulesUse.query {
		env.Query = p.Request.Query
	}
	if ci.rulesUse.body {
		env.Body = body
	}
	return env
}

// rulesUse says which parts of a request a collection's rules mention.
type rulesUse struct{ headers, query, body bool }

func rulesUseOf(c *schema.Collection) rulesUse {
	var b strings.Builder
	for _, r := range []*string{c.ViewRule, c.CreateRule, c.UpdateRule, c.DeleteRule} {
		if r != nil {
			b.WriteString(*r)
			b.WriteByte('\n')
		}
	}
	text := b.String()
	return rulesUse{
		headers: strings.Contains(text, "@request.headers"),
		query:   strings.Contains(text, "@request.query"),
		body:    strings.Contains(text, "@request.body"),
	}
}

// filterColl describes ci to the filter language.
func (ci *Coll) filterColl() *filter.Collection {
	if fc := ci.fc.Load(); fc != nil {
		return fc
	}
	fc := &filter.Collection{ID: ci.ID, Name: ci.Name, Public: ci.ViewRule != nil && strings.TrimSpace(*ci.ViewRule) == ""}
	fc.Fields = append(fc.Fields, &filter.FieldDef{Name: "id", Type: "id"})
	if ci.hasCreated {
		fc.Fields = append(fc.Fields, &filter.FieldDef{Name: "created", Type: "date_system"})
	}
	if ci.hasUpdated {
		fc.Fields = append(fc.Fields, &filter.FieldDef{Name: "updated", Type: "date_system"})
	}
	for _, f := range ci.fields {
		fc.Fields = append(fc.Fields, &filter.FieldDef{
			Name: f.Name, Type: f.Type, Multiple: f.Multiple, Target: f.Collection,
			Hidden: f.Hidden, Private: f.private || f.Type == schema.FieldVector || f.Encrypted,
		})
	}
	ci.fc.Store(fc)
	return fc
}

// FilterCollection lets the read side's schema resolve filter references.
func (s *schemaSet) FilterCollection(nameOrID string) *filter.Collection {
	if ci := s.lookup(nameOrID); ci != nil {
		return ci.filterColl()
	}
	return nil
}

// txResolver resolves filter references inside the state machine's
// transaction: the schema as of this log index, on every node.
type txResolver struct {
	e  *Engine
	tx *fsm.Tx
}

func (r txResolver) FilterCollection(nameOrID string) *filter.Collection {
	var id string
	var ver int64
	err := r.tx.QueryRow(`SELECT id, version FROM _svc_collections WHERE id = ?1 OR name = ?1 COLLATE NOCASE`, nameOrID).Scan(&id, &ver)
	if err != nil {
		return nil
	}
	ci, err := r.e.applied.get(r.tx, id, ver)
	if err != nil {
		return nil
	}
	return ci.filterColl()
}

// ruleSQL compiles a rule of ci: allowAll for "" (or an admin), denyAll
// for null (non-admins) or a rule that does not compile (an invalid rule
// denies); otherwise a condition over alias _r appended to args.
func ruleSQL(ci *Coll, rule *string, admin bool, res filter.Resolver, env *filter.Env, args []any) (cond *filter.SQL, allowAll, denyAll bool) {
	if all, none, trivial := trivialRule(rule, admin); trivial {
		return nil, all, none
	}
	e, err := ci.parseRule(*rule)
	if err != nil {
		return nil, false, true
	}
	sql, err := filter.CompileSQL(e, ci.filterColl(), res, env, "_r", args...)
	if err != nil {
		return nil, false, true
	}
	return sql, false, false
}

// trivialRule answers a rule check that needs no evaluation: an admin (or
// a broken-rule check) passes, no rule (admin only) denies, an empty rule
// lets everyone in.
func trivialRule(rule *string, admin bool) (allowAll, denyAll, trivial bool) {
	switch {
	case admin, brokenRuleCheck:
		return true, false, true
	case rule == nil:
		return false, true, true
	case strings.TrimSpace(*rule) == "":
		return true, false, true
	}
	return false, false, false
}

// ruleHolds checks rule against one row inside the transaction.
func (e *Engine) ruleHolds(tx *fsm.Tx, ci *Coll, rule *string, admin bool, env *RuleEnv, id string) (bool, error) {
	if all, _, trivial := trivialRule(rule, admin); trivial {
		return all, nil
	}
	fenv := env.filterEnv()
	fenv.AuthField = e.txAuthField(tx)
	cond, all, none := ruleSQL(ci, rule, admin, txResolver{e, tx}, fenv, nil)
	switch {
	case all:
		return true, nil
	case none:
		return false, nil
	}
	var n int
	err := tx.QueryRow("SELECT count(*) FROM "+ci.table+" AS _r WHERE "+cond.Where+" AND _r.id = ?", append(cond.Args, id)...).Scan(&n)
	return n > 0, err
}
