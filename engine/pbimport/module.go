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
package pbimport

import (
	"svcd/engine"
	"svcd/fsm"
)

// Command types of the module (engine/DESIGN.md): 160 imports a chunk of
// rows; 161-164 are kept for the module.
const cmdRows fsm.Type = 160

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
	engine.RegisterResult[Result](core, "pbimport")
	return m
}
