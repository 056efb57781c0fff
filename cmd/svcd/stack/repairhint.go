package stack

import (
	"errors"
	"fmt"
	"strings"

	sqlite3 "github.com/mattn/go-sqlite3"

	"svcd/cluster"
)

// repairHint completes a start error caused by a file of the data
// directory with what to do about it: the command that repairs it
// (svcd repair, docs/operations.md), or the other process that holds it.
func repairHint(cfg Config, err error) error {
	switch {
	case errors.Is(err, cluster.ErrLogLocked):
		return fmt.Errorf("%w (is another svcd running on %s?)", err, cfg.DataDir)
	case errors.Is(err, cluster.ErrDamaged) && cfg.RaftAddr == "":
		return fmt.Errorf("%w; this node runs alone, so no peer holds a copy of its log: "+
			"restore the data directory from a backup (docs/operations.md)", err)
	case errors.Is(err, cluster.ErrDamaged):
		return fmt.Errorf("%w; repair: svcd repair reseed --dir %s, then start this node again: "+
			"it rejoins the cluster and receives a snapshot from the leader (docs/operations.md)", err, cfg.DataDir)
	case databaseDamaged(err):
		return fmt.Errorf("%w; the database file is damaged; repair: svcd repair rebuild-db --dir %s, then start "+
			"this node again: it rebuilds the database from its snapshot and log (docs/operations.md)", err, cfg.DataDir)
	}
	return err
}

// databaseDamaged reports whether err is SQLite finding the database file
// malformed or not a database at all. Some open paths format SQLite's
// error as text, hence the second test.
func databaseDamaged(err error) bool {
	var se sqlite3.Error
	if errors.As(err, &se) {
		return se.Code == sqlite3.ErrCorrupt || se.Code == sqlite3.ErrNotADB
	}
	msg := err.Error()
	return strings.Contains(msg, "malformed") || strings.Contains(msg, "not a database")
}
