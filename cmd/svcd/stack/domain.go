package stack

import (
	"time"

	"svcd/engine"
	"svcd/engine/auth"
	"svcd/engine/backup"
	"svcd/engine/csv"
	"svcd/engine/files"
	"svcd/engine/flags"
	"svcd/engine/history"
	"svcd/engine/search"
	"svcd/engine/token"
)

// Domain is the engine's core with every module wired to it: the one
// place that knows which modules make svcd. Each module registers its
// commands, migrations, settings and hooks on the core as it is built;
// the registries are sealed before anything is applied.
type Domain struct {
	Engine *engine.Engine
	// Auth signs admins, users and API tokens in and keeps their sessions.
	Auth *auth.Auth
	// Search keeps the full-text index and answers the search and
	// vector search of record lists.
	Search *search.Search
	// History keeps and serves record history.
	History *history.History
	// CSV exports and imports the records of base collections.
	CSV *csv.CSV
	// Files stores, serves and deletes the files of file fields.
	Files *files.Files
	// Flags keeps and evaluates feature flags and their segments.
	Flags *flags.Flags
	// Backups copies the database for backups, restores uploaded ones on
	// every node and writes scheduled backups.
	Backups *backup.Backups
}

// DomainOptions configure the core and its modules.
type DomainOptions struct {
	engine.Options
	// Signer signs and verifies session tokens (engine/auth) and file
	// tokens (engine/files).
	Signer *token.Signer
	// ProgressInterval is the time between two progress lines of a CSV
	// import or export (0: the default, 5 s).
	ProgressInterval time.Duration
	// Blobs are the stores of uploaded files' bytes (engine/files).
	Blobs files.Stores
	// Thumbnails makes thumbnails (nil: originals are served).
	Thumbnails files.Thumbnailer
	// Backup configures engine/backup (its directory, the peers a restore
	// copies its file to, the destinations of scheduled backups).
	Backup backup.Options
}

// NewDomain builds the core on opts.Store and wires the modules. Call it
// before the consensus layer applies any entry.
func NewDomain(opts DomainOptions) (*Domain, error) {
	eng, err := engine.New(opts.Options)
	if err != nil {
		return nil, err
	}
	d := &Domain{Engine: eng}
	// The order of the modules is the order their record hooks run in:
	// account clean-up (auth), the search index, history, as when they
	// were part of the core.
	if d.Auth, err = auth.New(eng, auth.Options{Signer: opts.Signer, Outbound: opts.Outbound}); err != nil {
		return nil, err
	}
	d.Search = search.New(eng)
	d.History = history.New(eng)
	d.CSV = csv.New(eng, csv.Options{ProgressInterval: opts.ProgressInterval})
	d.Files = files.New(eng, files.Options{Stores: opts.Blobs, Signer: opts.Signer, Credentials: d.Auth, Thumbnails: opts.Thumbnails})
	d.History.RestoreFilesWith(d.Files)
	if d.Flags, err = flags.New(eng); err != nil {
		return nil, err
	}
	if d.Backups, err = backup.New(eng, opts.Backup); err != nil {
		return nil, err
	}
	if err := eng.Seal(); err != nil {
		return nil, err
	}
	return d, nil
}
