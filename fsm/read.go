package fsm

import (
	"context"
	"database/sql"
	"errors"
)

// Reader runs read-only statements on the pool of reader connections. It is
// valid only inside the View callback that produced it.
type Reader struct {
	ctx   context.Context
	db    *sql.DB
	stmts *stmtCache
	tx    *sql.Tx
}

// View runs fn with read access to this replica. Statements inside one View
// may see different committed states; use ViewTx for one consistent state.
func (s *Store) View(ctx context.Context, fn func(r *Reader) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.pools == nil {
		return ErrClosed
	}
	return fn(&Reader{ctx: ctx, db: s.pools.reader, stmts: s.pools.rstmts})
}

// ViewTx runs fn inside one read transaction: every statement sees the same
// committed state.
func (s *Store) ViewTx(ctx context.Context, fn func(r *Reader) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.pools == nil {
		return ErrClosed
	}
	tx, err := s.pools.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	return fn(&Reader{ctx: ctx, db: s.pools.reader, stmts: s.pools.rstmts, tx: tx})
}

// Query runs a statement, prepared once per connection and cached. Inside
// ViewTx statements run on the transaction's connection unprepared:
// preparing through the pool there could wait for a connection that only
// the waiting transactions hold.
func (r *Reader) Query(query string, args ...any) (*sql.Rows, error) {
	if r.tx != nil {
		return r.tx.QueryContext(r.ctx, query, args...)
	}
	st, err := r.stmts.get(r.ctx, query)
	if errors.Is(err, errCacheFull) {
		st.Close()
		return r.db.QueryContext(r.ctx, query, args...)
	}
	if err != nil {
		return nil, err
	}
	return st.QueryContext(r.ctx, args...)
}

// QueryRow runs a statement expected to return one row (see Query).
func (r *Reader) QueryRow(query string, args ...any) *sql.Row {
	if r.tx != nil {
		return r.tx.QueryRowContext(r.ctx, query, args...)
	}
	st, err := r.stmts.get(r.ctx, query)
	if err != nil {
		if st != nil {
			st.Close()
		}
		return r.db.QueryRowContext(r.ctx, query, args...)
	}
	return st.QueryRowContext(r.ctx, args...)
}

// QueryDirect runs a one-off statement without caching its preparation (for
// SQL that varies per request, such as validating a view query).
func (r *Reader) QueryDirect(query string, args ...any) (*sql.Rows, error) {
	if r.tx != nil {
		return r.tx.QueryContext(r.ctx, query, args...)
	}
	return r.db.QueryContext(r.ctx, query, args...)
}

// Context is the context of the read.
func (r *Reader) Context() context.Context { return r.ctx }
