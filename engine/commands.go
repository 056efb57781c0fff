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
	// 23: an update with write modifiers ("views+"), so a binary that does
	// not know them refuses it instead of applying the update without
	// them (21 still applies the modifiers of the entries written before).
	cmdRecordUpdateMods fsm.Type = 23
	cmdRecordDelete     fsm.Type = 22
	// 30-34, 60-65 and 70-79: engine/auth.
	cmdSettingsPatch fsm.Type = 40
	cmdIndexCreate   fsm.Type = 50
	cmdIndexDelete   fsm.Type = 51
	cmdRotateKey     fsm.Type = 55
	// 56: key rotation that re-seals modules' secrets too (rotate_sealed.go).
	cmdRotateKeySecrets fsm.Type = 56

	// Atomic batches of record operations (engine/batch*.go).
	cmdBatch fsm.Type = 80

	// 81 (record.csv_import) is engine/csv's.
)

// Event kinds emitted by the engine's handlers.
const (
	EvMigrate      = "migrate"
	EvSchema       = "schema"
	EvSettings     = "settings"
	EvRecordCreate = "record.create"
	EvRecordUpdate = "record.update"
	EvRecordDelete = "record.delete"
	// EvAdmins: the admins changed (engine/auth rebuilds its cache on it;
	// engine/pbimport's admin import emits it too).
	EvAdmins = "admins"
)

func (e *Engine) register() {
	e.registerCoreMigrations()
	e.registerCoreSettings()
	e.registerRowResult()
	RegisterResult[BatchResult](e, "batch")
	RegisterResult[RotateResult](e, "rotate")

	e.Command(cmdMigrate, "migrate", e.applyMigrate)
	e.Command(cmdCollectionCreate, "collection.create", e.ddl.applyCollectionCreate)
	e.Command(cmdCollectionUpdate, "collection.update", e.ddl.applyCollectionUpdate)
	e.Command(cmdCollectionDelete, "collection.delete", e.ddl.applyCollectionDelete)
	e.Command(cmdRecordCreate, "record.create", e.recs.applyRecordCreate)
	e.Command(cmdRecordUpdate, "record.update", e.recs.applyRecordUpdate)
	e.Command(cmdRecordUpdateMods, "record.update_with_modifiers", e.recs.applyRecordUpdate)
	e.Command(cmdRecordDelete, "record.delete", e.recs.applyRecordDelete)
	e.Command(cmdSettingsPatch, "settings.patch", e.applySettingsPatch)
	e.Command(cmdIndexCreate, "index.create", e.ddl.applyIndexCreate)
	e.Command(cmdIndexDelete, "index.delete", e.ddl.applyIndexDelete)
	e.Command(cmdRotateKey, "key.rotate", e.applyRotateKey)
	e.Command(cmdRotateKeySecrets, "key.rotate_with_secrets", e.applyRotateKey)
	e.Command(cmdBatch, "record.batch", e.recs.applyBatch)
	e.Command(cmdBatchUpsert, "record.batch_upsert", e.recs.applyBatch)
	e.registerPrune()
}

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }
