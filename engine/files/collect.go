package files

import (
	"context"
	"database/sql"
	"errors"
	"regexp"
	"sort"
	"sync"
	"time"

	"svcd/engine"
	"svcd/fsm"
)

// The collector removes bytes no record references, outside the state
// machine: the tombstones' blobs once the grace period has passed
// (files.delete_grace_seconds), and blobs no row names at all (an upload
// whose command failed, a node's copy of a file deleted while it was
// down) once they are older than the grace period. Every node removes its
// own copies from a local store; a shared store (S3) is collected by the
// leader only, which also drops the tombstones whose bytes are gone
// (cmdPurge) through the log.

// drivers are the storage drivers the collector looks at.
var drivers = []string{"local", "s3"}

// sweepable are the keys the module writes: stored names, and the
// temporary files a local write abandoned by a crash leaves beside them
// (fileblob's "<key>.<hex>.tmp"). Nothing else in a store (a bucket
// shared with other data) is ever swept.
var sweepable = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.[a-z0-9]{1,12}(\.[0-9a-f]+\.tmp)?$`)

// sweepEvery is how often the collector lists whole stores for blobs no
// row names.
const sweepEvery = time.Hour

// Collector removes unreferenced bytes; Run drives it.
type Collector struct {
	m  *Files
	mu sync.Mutex
	// firstSeen is when this node first saw a tombstone without a time
	// (a dropped collection); in memory: a restart counts again, which
	// only keeps bytes longer.
	firstSeen map[int64]time.Time
	lastSweep time.Time
}

// Collector returns the module's collector.
func (m *Files) Collector() *Collector {
	return &Collector{m: m, firstSeen: map[int64]time.Time{}}
}

// Run collects every interval until ctx ends; leader says whether this
// node leads (it collects shared stores and purges tombstones).
func (c *Collector) Run(ctx context.Context, leader func() bool, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if !c.m.core.Migrated() {
				continue
			}
			if err := c.Collect(ctx, leader()); err != nil && ctx.Err() == nil {
				c.m.log.Warn("files: collect", "err", err)
			}
		}
	}
}

// tombstoneRow is one file no record references any more.
type tombstoneRow struct {
	id        int64
	name      string
	driver    string
	deletedAt int64
}

// Collect runs one pass.
func (c *Collector) Collect(ctx context.Context, leader bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.m
	now := m.core.Now()
	grace := time.Duration(m.grace()) * time.Second
	var due []tombstoneRow
	err := m.core.Store().View(ctx, func(r *fsm.Reader) error {
		rows, err := r.Query(`SELECT id, name, driver, deleted_at FROM _svc_files_deleted ORDER BY id LIMIT 1000`)
		if err != nil {
			return err
		}
		defer rows.Close()
		seen := map[int64]bool{}
		for rows.Next() {
			var t tombstoneRow
			if err := rows.Scan(&t.id, &t.name, &t.driver, &t.deletedAt); err != nil {
				return err
			}
			seen[t.id] = true
			at := time.Unix(t.deletedAt, 0)
			if t.deletedAt == 0 {
				if _, ok := c.firstSeen[t.id]; !ok {
					c.firstSeen[t.id] = now
				}
				at = c.firstSeen[t.id]
			}
			if !at.Add(grace).After(now) {
				due = append(due, t)
			}
		}
		for id := range c.firstSeen {
			if !seen[id] {
				delete(c.firstSeen, id)
			}
		}
		return rows.Err()
	})
	if err != nil {
		return err
	}
	var purge []int64
	for _, t := range due {
		store, err := m.stores.Store(ctx, t.driver)
		if err != nil {
			continue // not configured here: the tombstone waits
		}
		if store.Shared() && !leader {
			continue
		}
		if referenced, err := m.referenced(ctx, t.name); err != nil || referenced {
			continue
		}
		if err := store.Delete(ctx, t.name); err != nil {
			m.log.Warn("files: delete a removed file's bytes", "name", t.name, "err", err)
			continue
		}
		if m.thumbs != nil {
			m.thumbs.Forget(t.name)
		}
		purge = append(purge, t.id)
	}
	if leader && len(purge) > 0 {
		if _, _, err := m.core.Propose(ctx, cmdPurge, purgeCmd{IDs: purge}); err != nil {
			return err
		}
	}
	if now.Sub(c.lastSweep) >= sweepEvery {
		c.lastSweep = now
		for _, d := range drivers {
			if err := c.sweep(ctx, d, leader, now.Add(-grace)); err != nil {
				m.log.Warn("files: sweep unreferenced blobs", "driver", d, "err", err)
			}
		}
	}
	return nil
}

// sweep removes the blobs of driver's store that no row names and that
// are older than before.
func (c *Collector) sweep(ctx context.Context, driver string, leader bool, before time.Time) error {
	m := c.m
	store, err := m.stores.Store(ctx, driver)
	if err != nil || store.Shared() && !leader {
		return nil // not configured, or the leader's job
	}
	var old []string
	if err := store.List(ctx, func(key string, modified time.Time) error {
		if sweepable.MatchString(key) && modified.Before(before) {
			old = append(old, key)
		}
		return nil
	}); err != nil {
		return err
	}
	for _, key := range old {
		known, err := m.known(ctx, key)
		if err != nil {
			return err
		}
		if known {
			continue
		}
		if err := store.Delete(ctx, key); err != nil {
			return err
		}
		if m.thumbs != nil {
			m.thumbs.Forget(key)
		}
	}
	return nil
}

// referenced reports whether a record names stored name.
func (m *Files) referenced(ctx context.Context, name string) (bool, error) {
	var n int
	err := m.core.Store().View(ctx, func(r *fsm.Reader) error {
		return r.QueryRow(`SELECT count(*) FROM _svc_files WHERE name = ?`, name).Scan(&n)
	})
	return n > 0, err
}

// known reports whether a row names key: a record's file, or a tombstone
// still waiting for its grace period.
func (m *Files) known(ctx context.Context, key string) (bool, error) {
	var n int
	err := m.core.Store().View(ctx, func(r *fsm.Reader) error {
		err := r.QueryRow(`SELECT (SELECT count(*) FROM _svc_files WHERE name = ?1) + (SELECT count(*) FROM _svc_files_deleted WHERE name = ?1)`, key).Scan(&n)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		return err
	})
	return n > 0, err
}

// purgeCmd drops tombstones whose bytes are gone.
type purgeCmd struct {
	IDs []int64 `json:"ids"`
}

func (m *Files) applyPurge(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	c, err := engine.DecodeCmd[purgeCmd](cmd)
	if err != nil {
		return nil, err
	}
	ids := append([]int64(nil), c.IDs...)
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		if _, err := tx.Exec(`DELETE FROM _svc_files_deleted WHERE id = ?`, id); err != nil {
			return nil, err
		}
	}
	return nil, nil
}
