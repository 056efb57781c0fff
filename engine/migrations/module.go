// Package migrations is the engine's module of schema snapshots: the
// schema of a node as one portable JSON document (collections of every
// type with their fields and every option, rules, indexes, the history
// switch), the diff of the node against a snapshot, and its apply in
// mode additive (only create and extend) or sync (also remove what the
// snapshot does not have).
//
// Collections are matched by name and fields by name within their
// collection: ids are local to an instance and a snapshot carries none
// (a relation names its target collection). So a snapshot taken on one
// node applies to any other, and applying it twice changes nothing the
// second time (the diff is empty). The collections modules create for
// themselves (svc_..., engine/notify's) are left out: each node's modules
// own them.
//
// An apply is one command (145) carrying the whole plan, built by the
// core (engine.SchemaPlan: the same create, update, delete and index
// handlers as the routes) and applied in one transaction at the same log
// index on every node; the apply checks that no collection it touches
// moved since the plan was made (else the proposer plans again).
package migrations

import (
	"svcd/engine"
	"svcd/fsm"
)

// Command types of the module (engine/DESIGN.md): 145 applies a plan;
// 146-149 are kept for the module.
const cmdApply fsm.Type = 145

// Migrations is the module.
type Migrations struct {
	core *engine.Engine
}

// New wires the module to core. Call it before core.Seal.
func New(core *engine.Engine) *Migrations {
	m := &Migrations{core: core}
	core.Command(cmdApply, "migrations.apply", m.applyPlan)
	return m
}
