package engine

import (
	"bytes"
	"io"

	"svcd/fsm"
)

// Command types owned by the engine. Numbers are never reused.
const (
	cmdMigrate          fsm.Type = 1
	cmdCollectionCreate fsm.Type = 10
	cmdCollectionUpdate fsm.Type = 11
	cmdCollectionDelete fsm.Type = 12
	cmdRecordCreate     fsm.Type = 20
	cmdRecordUpdate     fsm.Type = 21
	cmdRecordDelete     fsm.Type = 22
	cmdAdminCreate      fsm.Type = 30
	cmdSettingsPatch    fsm.Type = 40
	cmdIndexCreate      fsm.Type = 50
	cmdIndexDelete      fsm.Type = 51
)

// Event kinds emitted by the engine's handlers.
const (
	evMigrate      = "migrate"
	evSchema       = "schema"
	evAdmins       = "admins"
	evSettings     = "settings"
	EvRecordCreate = "record.create"
	EvRecordUpdate = "record.update"
	EvRecordDelete = "record.delete"
)

func (e *Engine) register(r *fsm.Registry) {
	r.Register(cmdMigrate, "migrate", e.applyMigrate)
	r.Register(cmdCollectionCreate, "collection.create", e.applyCollectionCreate)
	r.Register(cmdCollectionUpdate, "collection.update", e.applyCollectionUpdate)
	r.Register(cmdCollectionDelete, "collection.delete", e.applyCollectionDelete)
	r.Register(cmdRecordCreate, "record.create", e.applyRecordCreate)
	r.Register(cmdRecordUpdate, "record.update", e.applyRecordUpdate)
	r.Register(cmdRecordDelete, "record.delete", e.applyRecordDelete)
	r.Register(cmdAdminCreate, "admin.create", e.applyAdminCreate)
	r.Register(cmdSettingsPatch, "settings.patch", e.applySettingsPatch)
	r.Register(cmdIndexCreate, "index.create", e.applyIndexCreate)
	r.Register(cmdIndexDelete, "index.delete", e.applyIndexDelete)
}

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }
