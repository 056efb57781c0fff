// Package pbimport is the engine's module for importing the records of
// another system with what the records API never lets a client choose:
// each record keeps its id, its created and updated times, and, in an
// auth collection, its password hash as the other system stored it (a
// PocketBase bcrypt hash; engine/password verifies it at sign-in and the
// account module rehashes it to argon2id). `svcd import-pocketbase` sends
// its rows here (POST /api/v1/admin/import-rows, owner).
//
// A chunk of rows is one command (160). Each row is prepared on the
// proposing node as an admin create (the collection's validation, no
// rules), and applied under its own savepoint: a record whose id exists
// is left as it is and counted as skipped (so an import run twice
// changes nothing the second time), a row the state machine refuses (a
// unique value taken) fails alone with its reason.
//
// The same route family imports another system's operators as admins
// with their password hashes (161: POST /api/v1/admin/import-admins) and
// its OAuth2 links (162: POST /api/v1/admin/import-oauth2-links), with
// the same rule: what exists is skipped.
package pbimport

import (
	"svcd/engine"
	"svcd/fsm"
)

// Command types of the module (engine/DESIGN.md): 160 imports a chunk of
// rows, 161 admins (PocketBase's superusers), 162 OAuth2 links
// (PocketBase's _externalAuths); 163-164 are kept for the module.
const (
	cmdRows   fsm.Type = 160
	cmdAdmins fsm.Type = 161
	cmdLinks  fsm.Type = 162
)

// MaxRows is the most rows one call imports (one command).
const MaxRows = 500

// Import is the module.
type Import struct {
	core *engine.Engine
}

// New wires the module to core. Call it before core.Seal.
func New(core *engine.Engine) *Import {
	m := &Import{core: core}
	core.Command(cmdRows, "pbimport.rows", m.applyRows)
	core.Command(cmdAdmins, "pbimport.admins", m.applyAdmins)
	core.Command(cmdLinks, "pbimport.oauth2_links", m.applyLinks)
	engine.RegisterResult[Result](core, "pbimport")
	return m
}
