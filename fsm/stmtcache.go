package fsm

import (
	"context"
	"database/sql"
	"errors"
	"sync"
)

// maxCachedStmts bounds a statement cache; past it the cache starts over.
const maxCachedStmts = 1024

// stmtCache keeps prepared statements of one connection pool by SQL text.
type stmtCache struct {
	db *sql.DB
	mu sync.Mutex
	m  map[string]*sql.Stmt
}

func newStmtCache(db *sql.DB) *stmtCache {
	return &stmtCache{db: db, m: make(map[string]*sql.Stmt)}
}

func (c *stmtCache) get(ctx context.Context, query string) (*sql.Stmt, error) {
	c.mu.Lock()
	st, ok := c.m[query]
	c.mu.Unlock()
	if ok {
		return st, nil
	}
	st, err := c.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if prev, ok := c.m[query]; ok {
		st.Close()
		return prev, nil
	}
	if len(c.m) >= maxCachedStmts {
		// Full: statements in the cache may be in use by other readers, so
		// none is evicted; this one is handed out uncached and closed by
		// the caller through the returned flag.
		return st, errCacheFull
	}
	c.m[query] = st
	return st, nil
}

// errCacheFull tells the caller its statement is not cached.
var errCacheFull = errors.New("fsm: statement cache full")

// reset drops every statement, for example after the schema changed in a
// way that invalidates them.
func (c *stmtCache) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, st := range c.m {
		st.Close()
		delete(c.m, k)
	}
}
