package files

import (
	"strconv"
	"strings"

	"svcd/engine"
)

// schemaVersion is the internal schema version of the module's tables
// (engine/DESIGN.md lists the versions). Never change a released version.
const schemaVersion = 6

// keepMetaSince is the internal schema version from which a tombstone
// keeps the removed file's metadata (record, field, original name, size,
// type, digest, time), so a history restore within the grace period can
// bring the file back (restore.go).
const keepMetaSince = 7

// registerTables: the metadata of every stored file, the tombstones of
// deleted ones, and the one-time file tokens already used.
func (m *Files) registerTables() {
	m.core.Migration(engine.Migration{Version: schemaVersion, Owner: "files", Stmts: []string{
		// One row per stored file a record references. driver is the
		// storage the bytes went to; sha256 their digest (the ETag).
		`CREATE TABLE _svc_files (name TEXT PRIMARY KEY, collection_id TEXT NOT NULL, record_id TEXT NOT NULL,
			field_id TEXT NOT NULL, original_name TEXT NOT NULL, size INTEGER NOT NULL, mime TEXT NOT NULL,
			sha256 TEXT NOT NULL, driver TEXT NOT NULL, created INTEGER NOT NULL)`,
		`CREATE INDEX _svc_files_record ON _svc_files (collection_id, record_id, field_id)`,
		// Files no record references any more: their bytes are removed by
		// the collector after the grace period. deleted_at is the
		// command's time, 0 when the command had none (a dropped
		// collection: the collector counts from when it first saw it).
		`CREATE TABLE _svc_files_deleted (id INTEGER PRIMARY KEY, name TEXT NOT NULL, driver TEXT NOT NULL,
			deleted_at INTEGER NOT NULL)`,
		`CREATE INDEX _svc_files_deleted_name ON _svc_files_deleted (name)`,
		// One-time file tokens that were used (their jti), until they
		// expire.
		`CREATE TABLE _svc_file_tokens (jti TEXT PRIMARY KEY, expires_at INTEGER NOT NULL)`,
	}})
	// Tombstones keep the metadata of the file they remove (null in the
	// tombstones made before). A command replayed on a replica that has
	// not reached this version writes the old columns only (tombstone).
	meta := make([]string, 0, 8)
	for _, col := range []string{"collection_id TEXT", "record_id TEXT", "field_id TEXT", "original_name TEXT",
		"size INTEGER", "mime TEXT", "sha256 TEXT", "created INTEGER"} {
		meta = append(meta, `ALTER TABLE _svc_files_deleted ADD COLUMN `+col)
	}
	m.core.Migration(engine.Migration{Version: keepMetaSince, Owner: "files", Stmts: meta})
}

// Settings of the module (CONTRACT.md "Uploads"; the grace period is
// issue 18's).
const (
	settingMaxUpload = "files.max_upload_bytes"
	settingMimeDeny  = "files.mime_deny"
	settingGrace     = "files.delete_grace_seconds"
	settingDriver    = "storage.driver" // registered by the core
	settingRedirect  = "storage.redirect_downloads"
	settingFileTTL   = "auth.file.window_seconds"
)

// defaultMimeDeny is CONTRACT.md's global deny list.
const defaultMimeDeny = "text/html,application/xhtml+xml,image/svg+xml,application/javascript,text/javascript,application/x-msdownload"

func (m *Files) registerSettings() {
	m.core.DefineSettings(engine.Defaults(
		settingMaxUpload, "104857600",
		settingMimeDeny, defaultMimeDeny,
		settingGrace, "604800",
	)...)
}

// maxUpload is files.max_upload_bytes (a malformed or non-positive value:
// the default).
func (m *Files) maxUpload() int64 {
	n, err := strconv.ParseInt(strings.TrimSpace(m.core.Setting(settingMaxUpload)), 10, 64)
	if err != nil || n <= 0 {
		return 104857600
	}
	return n
}

// denied reports whether mime is on the global deny list.
func (m *Files) denied(mime string) bool {
	for _, d := range strings.Split(m.core.Setting(settingMimeDeny), ",") {
		if d = strings.ToLower(strings.TrimSpace(d)); d != "" && d == mime {
			return true
		}
	}
	return false
}

// grace is files.delete_grace_seconds (at least 0).
func (m *Files) grace() int64 {
	n, err := strconv.ParseInt(strings.TrimSpace(m.core.Setting(settingGrace)), 10, 64)
	if err != nil || n < 0 {
		return 604800
	}
	return n
}

// tokenTTL is auth.file.window_seconds clamped to 60 s .. 365 days
// (SPEC.md).
func (m *Files) tokenTTL() int64 {
	n, err := strconv.ParseInt(strings.TrimSpace(m.core.Setting(settingFileTTL)), 10, 64)
	if err != nil {
		n = 3600
	}
	return min(max(n, 60), 365*24*3600)
}

// driver is the storage driver new uploads go to.
func (m *Files) driver() string {
	if d := strings.ToLower(strings.TrimSpace(m.core.Setting(settingDriver))); d == "s3" {
		return "s3"
	}
	return "local"
}
