// Package files is the engine's files module (SPEC.md "Files"): uploads to
// the file fields of records, downloads under the collection's view rule,
// the field's own viewRule and its flags, short-lived file tokens, and the
// deletion of the bytes a record no longer references.
//
// The log carries the metadata; the bytes travel beside it. An upload
// stores the bytes first, through the BlobStore of the current storage
// driver (blobstore.go), and proposes the metadata afterwards (one command
// that also changes the record). A command that fails leaves blobs no row
// names: the collector (collect.go) removes them once they are older than
// the grace period. Deleting a file never deletes its bytes inside an
// apply: the apply writes a tombstone, and the collector removes the bytes
// once the grace period has passed, so restoring a recent backup of the
// database does not leave records that name missing files.
//
// Cluster durability plugs in at the BlobStore: a store that streams the
// bytes to a majority of the voters before Put returns, and fetches a
// blob it lacks from a peer in Open, needs no change here.
package files

import (
	"log/slog"
	"strings"

	"svcd/engine"
	"svcd/engine/schema"
	"svcd/engine/token"
)

// Options are what the module needs besides the core.
type Options struct {
	// Stores resolves a storage driver ("local", "s3") to its blob store.
	Stores Stores
	// Signer issues and verifies file tokens (audience file).
	Signer *token.Signer
	// Credentials re-derives the principal behind a file token
	// (engine/auth, wired by the composition root).
	Credentials Credentials
	// Thumbnails makes thumbnails (nil: the original is served).
	Thumbnails Thumbnailer
}

// Files stores, serves and deletes the files of file fields (the module's
// face for the HTTP layer).
type Files struct {
	core   *engine.Engine
	stores Stores
	signer *token.Signer
	creds  Credentials
	thumbs Thumbnailer
	log    *slog.Logger
}

// New wires the files module to core: its tables, commands, results,
// settings and the hooks that turn record and field removals into
// tombstones.
func New(core *engine.Engine, opts Options) *Files {
	m := &Files{core: core, stores: opts.Stores, signer: opts.Signer, creds: opts.Credentials, thumbs: opts.Thumbnails, log: core.Logger()}
	m.registerTables()
	m.registerSettings()
	m.registerCommands()
	m.registerHooks()
	m.registerRestoreCarrier()
	return m
}

// Errors of the module.
var (
	errAuthRequired   = engine.Errorf(engine.KindUnauthorized, "Authentication required")
	errTokenRequired  = engine.Errorf(engine.KindUnauthorized, "Token required")
	errBadToken       = engine.Errorf(engine.KindUnauthorized, "Invalid or expired file token")
	errTokenElsewhere = engine.Errorf(engine.KindForbidden, "The file token is bound to another client address")
	errTokenOtherFile = engine.Errorf(engine.KindForbidden, "The file token opens another file")
	errTokenUsed      = engine.Errorf(engine.KindGone, "The file token was already used")
	errNoFileField    = engine.Errorf(engine.KindNotFound, "The collection has no such file field")
	errNoFile         = engine.Errorf(engine.KindNotFound, "The requested file wasn't found")
)

// fileField finds the file field named name (by name, case-sensitive) of
// ci.
func fileField(ci *engine.Coll, name string) (*engine.FieldInfo, int) {
	for i, f := range ci.RowFields() {
		if f.Name == name && f.Type == schema.FieldFile && !f.System() {
			return f, i
		}
	}
	return nil, -1
}

// fieldByID finds the file field with id of ci.
func fieldByID(ci *engine.Coll, id string) (*engine.FieldInfo, int) {
	for i, f := range ci.RowFields() {
		if f.ID == id && f.Type == schema.FieldFile {
			return f, i
		}
	}
	return nil, -1
}

// hasFileFields reports whether ci has any file field.
func hasFileFields(ci *engine.Coll) bool {
	for _, f := range ci.RowFields() {
		if f.Type == schema.FieldFile {
			return true
		}
	}
	return false
}

// adminOnlyRule reports a field viewRule of "" (SPEC.md: the empty string
// means admin-only, unlike a collection rule).
func adminOnlyRule(r *string) bool { return r != nil && strings.TrimSpace(*r) == "" }
