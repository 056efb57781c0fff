package engine

import (
	"svcd/engine/filter"
	"svcd/fsm"
)

// rowsIter is what a query answers on either side: *sql.Rows on the
// replica's readers, *fsm.Rows inside the apply transaction.
type rowsIter interface {
	Next() bool
	Scan(dest ...any) error
	Close() error
	Err() error
}

// rowScanner is one row of either side.
type rowScanner interface{ Scan(dest ...any) error }

// readSource is where a record read (get, list, expand) runs and what it
// sees: the replica's committed state for an HTTP read, or the apply
// transaction for a read inside a batch, which then sees the batch's own
// earlier writes, resolves collections as of this log index and evaluates
// rules with the command's captured request context.
type readSource struct {
	// who is the reader: its rights decide, per collection, whether rules
	// apply, hidden fields show, or the collection is out of reach.
	who Principal
	// query runs a statement; cached asks for a reused preparation.
	query    func(cached bool, q string, args ...any) (rowsIter, error)
	queryRow func(q string, args ...any) rowScanner
	// coll finds a collection by name or id (nil when there is none).
	coll func(nameOrID string) *Coll
	res  filter.Resolver
	// env is the context of the view rule (forRule) or of the caller's
	// own filter.
	env func(forRule bool) *filter.Env
}

// replicaSource reads committed state on this node as p.
func (e *Engine) replicaSource(r *fsm.Reader, p Principal) *readSource {
	return &readSource{
		who: p,
		query: func(cached bool, q string, args ...any) (rowsIter, error) {
			if cached {
				return r.Query(q, args...)
			}
			return r.QueryDirect(q, args...)
		},
		queryRow: func(q string, args ...any) rowScanner { return r.QueryRow(q, args...) },
		coll:     e.Coll,
		res:      e.schema.Load(),
		env:      func(forRule bool) *filter.Env { return e.recs.readEnv(p, forRule) },
	}
}

// txSource reads inside the apply transaction as who, with the request
// context env captured in the command.
func (e *Engine) txSource(tx *fsm.Tx, who Principal, env *RuleEnv) *readSource {
	authField := e.txAuthField(tx)
	return &readSource{
		who: who,
		// Reads in a batch vary with each request's filter: never cached
		// on the writer, whose statement cache serves the write path.
		query:    func(_ bool, q string, args ...any) (rowsIter, error) { return tx.QueryDirect(q, args...) },
		queryRow: func(q string, args ...any) rowScanner { return tx.QueryRow(q, args...) },
		coll:     func(nameOrID string) *Coll { return e.txCollection(tx, nameOrID) },
		res:      txResolver{e, tx},
		env: func(forRule bool) *filter.Env {
			fenv := env.readEnv(who, forRule)
			fenv.AuthField = authField
			return fenv
		},
	}
}

// txCollection resolves a collection inside the transaction. The engine's
// cached definition is preferred when it is the same version (it can open
// encrypted values for rendering); the state decided is the same.
func (e *Engine) txCollection(tx *fsm.Tx, nameOrID string) *Coll {
	var id string
	var ver int64
	err := tx.QueryRow(`SELECT id, version FROM _svc_collections WHERE id = ?1 OR name = ?1 COLLATE NOCASE`, nameOrID).Scan(&id, &ver)
	if err != nil {
		return nil
	}
	return e.renderColl(tx, id, ver)
}

// renderColl returns collection id at version ver for reads and rendering
// inside the transaction.
func (e *Engine) renderColl(tx *fsm.Tx, id string, ver int64) *Coll {
	if ci := e.Coll(id); ci != nil && ci.Version == ver {
		return ci
	}
	ci, err := e.applied.get(tx, id, ver)
	if err != nil {
		return nil
	}
	return ci
}

// readEnv is the filter context of a read inside the state machine: a
// rule's (forRule) or the reader's own filter's.
func (r *RuleEnv) readEnv(who Principal, forRule bool) *filter.Env {
	env := r.filterEnv()
	if forRule {
		return env
	}
	env.AllowHidden = false
	return who.filterEnv(env)
}

// bypass reports whether the reader acts as an admin on ci (no rules,
// hidden fields shown).
func (s *readSource) bypass(ci *Coll) bool { return s.who.bypasses(ci.Name, false) }

// reaches reports whether the reader may read ci at all.
func (s *readSource) reaches(ci *Coll) bool { return s.who.reaches(ci.Name) }
