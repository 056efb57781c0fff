package api

import (
	"net/http"
	"strings"

	"svcd/engine"
)

// roleRule gives the minimum admin role for reads and for writes under a
// path prefix. The first matching prefix wins; the table is the whole story
// of who may do what on the control plane.
type roleRule struct {
	prefix      string
	read, write engine.Role
}

var roleTable = []roleRule{
	{"/api/v1/admin/settings", engine.RoleOwner, engine.RoleOwner},
	{"/api/v1/admin/admins", engine.RoleOwner, engine.RoleOwner},
	{"/api/v1/admin/api-tokens", engine.RoleOwner, engine.RoleOwner},
	{"/api/v1/admin/security", engine.RoleOwner, engine.RoleOwner},
	{"/api/v1/admin/audit-log", engine.RoleViewer, engine.RoleOwner},
	// The node's log is operations data (SPEC.md: viewer reads logs); a
	// search is a POST that changes nothing.
	{"/api/v1/admin/logs", engine.RoleViewer, engine.RoleViewer},
	// A backup holds every table (password hashes, sessions, settings);
	// a restore replaces them: the owner's (SPEC.md). Covers
	// /admin/backups too.
	{"/api/v1/admin/backup", engine.RoleOwner, engine.RoleOwner},
	// An import writes records with chosen ids, times and password
	// hashes, past every rule: the owner's.
	{"/api/v1/admin/import-rows", engine.RoleOwner, engine.RoleOwner},
	// Admins with chosen password hashes and roles, OAuth2 links to any
	// account: the owner's too.
	{"/api/v1/admin/import-admins", engine.RoleOwner, engine.RoleOwner},
	{"/api/v1/admin/import-oauth2-links", engine.RoleOwner, engine.RoleOwner},
	{"/api/v1/admin/restore", engine.RoleOwner, engine.RoleOwner},
	// The digest hashes every internal table (admins, sessions, tokens,
	// settings): a viewer could watch them change and compare them across
	// nodes. It is cluster administration, the owner's (CONTRACT.md).
	{"/api/v1/admin/cluster/digest", engine.RoleOwner, engine.RoleOwner},
	// Cluster state is operations data every admin may read; membership,
	// leadership and snapshots are the owner's.
	{"/api/v1/admin/cluster", engine.RoleViewer, engine.RoleOwner},
	{"/api/v1/admin/collections", engine.RoleViewer, engine.RoleDeveloper},
	// Schema snapshots, their diffs and applies: migrations are the
	// developer's (SPEC.md), the snapshot read too.
	{"/api/v1/admin/migrations", engine.RoleDeveloper, engine.RoleDeveloper},
	// Server-side code and its queues: developers (SPEC.md); the code
	// may hold what only they should read.
	{"/api/v1/admin/jobs", engine.RoleDeveloper, engine.RoleDeveloper},
	{"/api/v1/admin/workers", engine.RoleDeveloper, engine.RoleDeveloper},
	{"/api/v1/admin/queues", engine.RoleDeveloper, engine.RoleDeveloper},
	// Webhooks (their URLs, headers and secrets) are the developer's.
	{"/api/v1/admin/webhooks", engine.RoleDeveloper, engine.RoleDeveloper},
	// Server-side code is the developer's; a workflow's runs hold app
	// data (inputs, step results), so reading them is too.
	{"/api/v1/admin/workflows", engine.RoleDeveloper, engine.RoleDeveloper},
	// Hooks and custom routes are code that runs with host access: their
	// code is read and written by developers (SPEC.md).
	{"/api/v1/admin/hooks", engine.RoleDeveloper, engine.RoleDeveloper},
	{"/api/v1/admin/routes", engine.RoleDeveloper, engine.RoleDeveloper},
	// Users' MFA and impersonation are app data (users): editors.
	{"/api/v1/admin/users", engine.RoleEditor, engine.RoleEditor},
	{"/api/v1/admin/impersonate", engine.RoleEditor, engine.RoleEditor},
	// CSV export and import read and write records: app data, editors.
	{"/api/v1/admin/export/", engine.RoleEditor, engine.RoleEditor},
	{"/api/v1/admin/import/", engine.RoleEditor, engine.RoleEditor},
	// Stored files' names, sizes and records are app data: editors. The
	// storage summary names the driver and bucket, never credentials.
	{"/api/v1/admin/files", engine.RoleEditor, engine.RoleEditor},
	{"/api/v1/_/metrics", engine.RoleViewer, engine.RoleViewer},
	// Feature flags and their segments, reads included: developers
	// (SPEC.md). Anyone may evaluate through the public route.
	{"/api/v1/admin/flags", engine.RoleDeveloper, engine.RoleDeveloper},
	{"/api/v1/admin/flag-segments", engine.RoleDeveloper, engine.RoleDeveloper},
	// The SQL console reads and writes (in a sandbox) app data and the
	// schema: developers (SPEC.md).
	{"/api/v1/admin/sql", engine.RoleDeveloper, engine.RoleDeveloper},
	// Push providers hold credentials, as settings do: developers read
	// them masked; changing them, probing them and sending test pushes is
	// the owner's (revealing them too, checked by the route).
	{"/api/v1/admin/notifications", engine.RoleDeveloper, engine.RoleOwner},
	// Record data: editors and above (SPEC.md: "editor: plus app data").
	{recordsScope, engine.RoleEditor, engine.RoleEditor},
}

// recordsScope is the pseudo-prefix the records handlers check against.
const recordsScope = "records:"

// requiredRole returns the minimum role for method on path; owner for any
// control-plane path not in the table, so a new route is closed by default.
func requiredRole(method, path string) engine.Role {
	write := method != http.MethodGet && method != http.MethodHead
	for _, rr := range roleTable {
		if strings.HasPrefix(path, rr.prefix) {
			if write {
				return rr.write
			}
			return rr.read
		}
	}
	return engine.RoleOwner
}
