package engine

import (
	"fmt"
	"sync"

	"svcd/fsm"
)

// applyCache keeps parsed collections for the apply path, keyed by id and
// schema version. The read-side schema set could lag a batch behind, so the
// apply path checks the version in the transaction and parses the stored
// definition itself when it has not seen that version.
type applyCache struct {
	mu sync.Mutex
	m  map[string]*Coll
}

func newApplyCache() *applyCache { return &applyCache{m: map[string]*Coll{}} }

func (c *applyCache) get(tx *fsm.Tx, id string, version int64) (*Coll, error) {
	c.mu.Lock()
	ci, ok := c.m[id]
	c.mu.Unlock()
	if ok && ci.Version == version {
		return ci, nil
	}
	var data string
	if err := tx.QueryRow(`SELECT data FROM _svc_collections WHERE id = ?`, id).Scan(&data); err != nil {
		return nil, err
	}
	ci, err := parseCollInfo(data, version)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", fsm.ErrHalt, err)
	}
	c.mu.Lock()
	c.m[id] = ci
	c.mu.Unlock()
	return ci, nil
}

func (c *applyCache) reset() {
	c.mu.Lock()
	c.m = map[string]*Coll{}
	c.mu.Unlock()
}
