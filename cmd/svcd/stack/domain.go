package stack

import (
	"time"

	"svcd/api/passkey"
	"svcd/api/pbcompat"
	"svcd/engine"
	"svcd/engine/auth"
	"svcd/engine/backup"
	"svcd/engine/csv"
	"svcd/engine/files"
	"svcd/engine/flags"
	"svcd/engine/history"
	"svcd/engine/jsvm"
	"svcd/engine/migrations"
	"svcd/engine/notify"
	"svcd/engine/pbimport"
	"svcd/engine/queue"
	"svcd/engine/search"
	"svcd/engine/sqlconsole"
	"svcd/engine/token"
	"svcd/engine/webhooks"
	"svcd/engine/workflows"
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
	// Queue keeps queue jobs, their workers and scheduled jobs; the
	// leader's loops run them (queue.go).
	Queue *queue.Queue
	// Webhooks manages webhooks and the outbox of their deliveries.
	Webhooks *webhooks.Webhooks
	// Workflows keeps workflows and their runs, and executes the runs on
	// the leader.
	Workflows *workflows.Workflows
	// Scripts runs the JavaScript admins write: hooks, custom routes,
	// and the code of jobs, queue workers and workflows (Run).
	Scripts *jsvm.Module
	// Notify keeps the inbox, device tokens and push providers; its push
	// jobs run on the queue's built-in queues (notify.go).
	Notify *notify.Notifications
	// Backups copies the database for backups, restores uploaded ones on
	// every node and writes scheduled backups.
	Backups *backup.Backups
	// Retention prunes what grows without end (engine/prune.go).
	Retention retention
	// SQL is the admins' SQL console: read-only runs on this replica,
	// sandboxes, saved queries, and writes through the log.
	SQL *sqlconsole.Console
	// Migrations takes, diffs and applies schema snapshots.
	Migrations *migrations.Migrations
	// Imports writes other systems' records with their ids, times and
	// password hashes.
	Imports *pbimport.Import
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
	// WebhookSender posts webhook deliveries (nil: they are queued but
	// never sent from this node).
	WebhookSender webhooks.Sender
	// Scripts are the JavaScript module's outside world: its guarded and
	// raw HTTP clients, the environment, the node's id.
	Scripts jsvm.ModuleOptions
	// OAuth2 exchanges OAuth2 codes with providers (engine/auth; nil:
	// OAuth2 sign-in answers 503).
	OAuth2 auth.OAuth2Client
	// Push speaks the push providers' protocols (nil: pushes fail and
	// are retried; test-connection answers 503).
	Push notify.Pusher
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
	if d.Auth, err = auth.New(eng, auth.Options{Signer: opts.Signer, Outbound: opts.Outbound, OAuth2: opts.OAuth2, Passkeys: passkey.Protocol{}}); err != nil {
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
	so := opts.Scripts
	if so.Outbound == nil {
		so.Outbound = opts.Outbound
	}
	if so.Auditor == nil {
		so.Auditor = codeAuditor{d.Auth.Admins()}
	}
	d.Scripts = jsvm.NewModule(eng, so)
	d.Queue = queue.New(eng, queue.Options{Code: d.Scripts.VM(), Builtin: notify.Queues()})
	d.Notify = notify.New(eng, notify.Options{Push: opts.Push, Jobs: pushJobs{d.Queue}})
	d.Webhooks = webhooks.New(eng, webhooks.Options{Sender: opts.WebhookSender, Keyring: opts.Keyring})
	d.Retention = retention{eng: eng, admins: d.Auth.Admins()}
	d.Workflows = workflows.New(eng, workflows.Options{Runner: workflowRunner{d.Scripts}})
	d.SQL = sqlconsole.New(eng, sqlconsole.Options{NodeID: opts.Scripts.NodeID})
	// The helpers whose work other modules do.
	d.Scripts.SetEnqueuer(enqueuer{d.Queue})
	d.Scripts.SetWorkflows(d.Workflows)
	d.Scripts.SetFlags(d.Flags)
	d.Scripts.SetWebhooks(d.Webhooks)
	d.Scripts.SetNotifier(notifier{d.Notify})
	if d.Backups, err = backup.New(eng, opts.Backup); err != nil {
		return nil, err
	}
	d.Migrations = migrations.New(eng)
	d.Imports = pbimport.New(eng)
	// The HTTP layer's PocketBase API reads its settings from the engine,
	// which must know them before it is sealed.
	eng.DefineSettings(pbcompat.SettingDefs()...)
	if err := eng.Seal(); err != nil {
		return nil, err
	}
	return d, nil
}
