package sqlconsole

import (
	"context"
	"database/sql/driver"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	sqlite3 "github.com/mattn/go-sqlite3"
)

// A sandbox is an admin's disposable copy of the database, on the node
// that built it (the answer names the node; another node builds its own).
// It is copied with SQLite's online backup API in one step, so it is one
// consistent state of the replica, and removed after the idle time
// (Options.SandboxIdle) or when the process starts again. Writes to it
// stay in it: they go through no log, no rule, no hook.
type sandbox struct {
	mu    sync.Mutex // one run at a time on a sandbox
	path  string
	built time.Time
	timer *time.Timer
	gone  bool // evicted: the next run builds a new one
}

// runSandbox runs query on admin's sandbox, building it first if needed.
func (c *Console) runSandbox(ctx context.Context, admin string, pol *policy, query string, args []driver.NamedValue, budget time.Duration) (*Result, error) {
	sb, err := c.sandboxOf(ctx, admin, false)
	if err != nil {
		return nil, err
	}
	defer sb.mu.Unlock()
	res := &Result{Mode: ModeSandbox, Node: c.nodeID()}
	err = withConn(ctx, sandboxDSN(sb.path), pol, func(sc *sqlite3.SQLiteConn) error {
		return execute(ctx, sc, pol, query, args, budget, res)
	})
	return res, err
}

// SandboxInfo describes a sandbox just built.
type SandboxInfo struct {
	Node  string `json:"node"`
	Built int64  `json:"built"`
	Size  int64  `json:"size"`
}

// ResetSandbox throws admin's sandbox away and builds a fresh copy.
func (c *Console) ResetSandbox(ctx context.Context, admin string) (*SandboxInfo, error) {
	if admin == "" {
		return nil, errNoAccount
	}
	sb, err := c.sandboxOf(ctx, admin, true)
	if err != nil {
		return nil, err
	}
	defer sb.mu.Unlock()
	info := &SandboxInfo{Node: c.nodeID(), Built: sb.built.Unix()}
	if st, err := os.Stat(sb.path); err == nil {
		info.Size = st.Size()
	}
	return info, nil
}

// sandboxOf returns admin's sandbox locked, built anew when there is none
// or fresh is set, its idle timer restarted.
func (c *Console) sandboxOf(ctx context.Context, admin string, fresh bool) (*sandbox, error) {
	c.mu.Lock()
	sb := c.sandbox[admin]
	if sb == nil {
		sb = &sandbox{path: filepath.Join(c.dir, fmt.Sprintf("%x.db", admin))}
		c.sandbox[admin] = sb
	}
	c.mu.Unlock()
	sb.mu.Lock()
	if sb.gone || fresh || sb.built.IsZero() {
		if err := c.build(ctx, sb.path); err != nil {
			sb.mu.Unlock()
			return nil, err
		}
		sb.gone, sb.built = false, time.Now()
	}
	if sb.timer != nil {
		sb.timer.Stop()
	}
	sb.timer = time.AfterFunc(c.idle, func() { c.evict(admin, sb) })
	return sb, nil
}

// evict removes sb's copy once it has been idle for the idle time.
func (c *Console) evict(admin string, sb *sandbox) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	sb.gone = true
	removeDB(sb.path)
	c.mu.Lock()
	if c.sandbox[admin] == sb {
		delete(c.sandbox, admin)
	}
	c.mu.Unlock()
}

// build copies the replica to path: SQLite's backup API, all pages in one
// step, which reads one committed state of the replica.
func (c *Console) build(ctx context.Context, path string) error {
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return fmt.Errorf("sqlconsole: sandbox folder: %w", err)
	}
	tmp := path + ".tmp"
	removeDB(tmp)
	err := withConn(ctx, sandboxDSN(tmp), nil, func(dst *sqlite3.SQLiteConn) error {
		return withConn(ctx, readonlyDSN(c.core.Store().Path()), nil, func(src *sqlite3.SQLiteConn) error {
			bk, err := dst.Backup("main", src, "main")
			if err != nil {
				return err
			}
			done, err := bk.Step(-1)
			if ferr := bk.Finish(); err == nil {
				err = ferr
			}
			if err == nil && !done {
				err = fmt.Errorf("backup did not finish")
			}
			return err
		})
	})
	if err != nil {
		removeDB(tmp)
		return fmt.Errorf("sqlconsole: build sandbox: %w", err)
	}
	removeDB(path)
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if _, err := os.Stat(tmp + suffix); err == nil {
			if err := os.Rename(tmp+suffix, path+suffix); err != nil {
				return fmt.Errorf("sqlconsole: build sandbox: %w", err)
			}
		}
	}
	return nil
}

// removeDB deletes a database file with its WAL and shared-memory files.
func removeDB(path string) {
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(path + suffix)
	}
}

// clearSandboxDir removes what an earlier process left.
func (c *Console) clearSandboxDir() {
	os.RemoveAll(c.dir)
}
