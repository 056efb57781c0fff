// Package backup is the engine's module of backups and restores: a
// consistent copy of the replica taken while writes go on (for GET
// /api/v1/admin/backup and `svcd backup`), the restore of an uploaded
// copy on every node at one log index (POST /api/v1/admin/restore), and
// scheduled backups to a directory or a bucket with retention, run by the
// leader (settings backup.schedule, backup.to, backup.keep, backup.gzip).
//
// A restore is a replace command (fsm/replace.go): the upload is checked
// (SQLite's integrity_check, that it is an svcd database, an internal
// schema version this binary knows), stored under its SHA-256 in Dir on
// this node and copied to the other members over the cluster's
// authenticated channel (Peers) before the small command naming its
// digest is proposed; each node then swaps its database for the file at
// that index, keeping its current database aside, and carries across what
// must not go back in time (engine/restore.go). A node that was away
// fetches the file from a peer when it reaches the entry.
//
// It registers command 125 (restore) and 126 (a backup run recorded), the
// internal table of version 12 (_svc_backups) and its settings. The
// stores backups are written to (a directory, S3) arrive through Targets,
// an interface the module owns: gocloud.dev/blob speaks HTTP, which the
// engine never imports.
package backup

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"svcd/engine"
)

// Command types of the module (engine/DESIGN.md).
const (
	cmdRestore   = 125
	cmdBackupRun = 126
)

// schemaVersion is the internal schema version of the module's table.
const schemaVersion = 18

// Options configure the module.
type Options struct {
	// Dir keeps the uploaded backups a restore installs (by digest), the
	// databases a restore replaced, and the temporary copies of backups
	// being sent. Empty: "restores" beside the database file (in the
	// data directory).
	Dir string
	// Peers copies files to the other nodes and fetches them (nil: a
	// single node, nothing to copy).
	Peers Peers
	// Targets opens the destinations of scheduled backups (nil: none).
	Targets Targets
	// NodeID names this node in the backup runs it records.
	NodeID string
}

// Backups is the module.
type Backups struct {
	core    *engine.Engine
	dir     string
	peers   Peers
	targets Targets
	node    string
	log     *slog.Logger

	// restoreMu lets one restore of this node upload and propose at a
	// time.
	restoreMu sync.Mutex
	// fetching holds the digests of restore files being fetched from a
	// peer for the apply path.
	fetchMu  sync.Mutex
	fetching map[string]bool
}

// New wires the module to core. Call it before core.Seal.
func New(core *engine.Engine, opts Options) (*Backups, error) {
	if opts.Dir == "" {
		opts.Dir = filepath.Join(filepath.Dir(core.Store().Path()), "restores")
	}
	if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	b := &Backups{core: core, dir: opts.Dir, peers: opts.Peers, targets: opts.Targets, node: opts.NodeID,
		log: core.Logger(), fetching: map[string]bool{}}
	b.sweep()
	b.registerTables()
	b.registerSettings()
	engine.RegisterResult[RestoreResult](core, "backup.restore")
	core.ReplaceCommand(cmdRestore, "backup.restore", b.applyRestore)
	core.Command(cmdBackupRun, "backup.run", b.applyBackupRun)
	core.OnRestore(engine.RestoreCarrier{Name: "backup", Carry: carryRuns})
	return b, nil
}

// Dir is where the module keeps its files.
func (b *Backups) Dir() string { return b.dir }

// sweep removes what an interrupted upload or download left in the
// directory (a crash, a stopped node).
func (b *Backups) sweep() {
	entries, err := os.ReadDir(b.dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		n := e.Name()
		if strings.HasPrefix(n, uploadPrefix) || strings.HasPrefix(n, copyPrefix) || strings.HasSuffix(n, ".part") {
			os.Remove(filepath.Join(b.dir, n))
		}
	}
}

// Names of the files in Dir.
const (
	uploadPrefix = "upload-" // an upload being received
	copyPrefix   = "copy-"   // a copy being sent
	asidePrefix  = "before-" // the database a restore replaced: before-<index>.db
)

// sourceName is the file a restore installs: its digest.
func sourceName(sha string) string { return sha + ".db" }
