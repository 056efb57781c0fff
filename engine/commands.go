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
	cmdAdminUpdate      fsm.Type = 31
	cmdAdminDelete      fsm.Type = 32
	cmdAdminsLogout     fsm.Type = 33
	cmdAdminSession     fsm.Type = 34
	cmdSettingsPatch    fsm.Type = 40
	cmdIndexCreate      fsm.Type = 50
	cmdIndexDelete      fsm.Type = 51
	cmdRotateKey        fsm.Type = 55
	cmdRevoke           fsm.Type = 60
	cmdLockoutFail      fsm.Type = 61
	cmdLockoutReset     fsm.Type = 62
	cmdAPITokenCreate   fsm.Type = 63
	cmdAPITokenDelete   fsm.Type = 64
	cmdAudit            fsm.Type = 65

	// Auth flows (engine/auth_*.go).
	cmdPasswordReset      fsm.Type = 70
	cmdEmailVerify        fsm.Type = 71
	cmdOTPIssue           fsm.Type = 72
	cmdOTPAuth            fsm.Type = 73
	cmdTOTPSetup          fsm.Type = 74
	cmdTOTPConfirm        fsm.Type = 75
	cmdTOTPDisable        fsm.Type = 76
	cmdRecoveryRegenerate fsm.Type = 77
	cmdMFAExchange        fsm.Type = 78
	cmdPromote            fsm.Type = 79

	// Atomic batches of record operations (engine/batch*.go).
	cmdBatch fsm.Type = 80

	// One chunk of a CSV import (engine/csv_import*.go).
	cmdCSVImport fsm.Type = 81
)

// Event kinds emitted by the engine's handlers.
const (
	evMigrate      = "migrate"
	evSchema       = "schema"
	evAdmins       = "admins"
	evSettings     = "settings"
	evRevoked      = "revoked"
	evAPITokens    = "api_tokens"
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
	r.Register(cmdAdminUpdate, "admin.update", e.applyAdminUpdate)
	r.Register(cmdAdminDelete, "admin.delete", e.applyAdminDelete)
	r.Register(cmdAdminsLogout, "admins.logout", e.applyAdminsLogout)
	r.Register(cmdAdminSession, "admin.session", e.applyAdminSession)
	r.Register(cmdSettingsPatch, "settings.patch", e.applySettingsPatch)
	r.Register(cmdIndexCreate, "index.create", e.applyIndexCreate)
	r.Register(cmdIndexDelete, "index.delete", e.applyIndexDelete)
	r.Register(cmdRotateKey, "key.rotate", e.applyRotateKey)
	r.Register(cmdRevoke, "token.revoke", e.applyRevoke)
	r.Register(cmdLockoutFail, "lockout.fail", e.applyLockoutFail)
	r.Register(cmdLockoutReset, "lockout.reset", e.applyLockoutReset)
	r.Register(cmdAPITokenCreate, "api_token.create", e.applyAPITokenCreate)
	r.Register(cmdAPITokenDelete, "api_token.delete", e.applyAPITokenDelete)
	r.Register(cmdAudit, "audit", e.applyAudit)
	r.Register(cmdPasswordReset, "auth.password_reset", e.applyPasswordReset)
	r.Register(cmdEmailVerify, "auth.email_verify", e.applyEmailVerify)
	r.Register(cmdOTPIssue, "auth.otp_issue", e.applyOTPIssue)
	r.Register(cmdOTPAuth, "auth.otp_auth", e.applyOTPAuth)
	r.Register(cmdTOTPSetup, "auth.totp_setup", e.applyTOTPSetup)
	r.Register(cmdTOTPConfirm, "auth.totp_confirm", e.applyTOTPConfirm)
	r.Register(cmdTOTPDisable, "auth.totp_disable", e.applyTOTPDisable)
	r.Register(cmdRecoveryRegenerate, "auth.recovery_regenerate", e.applyRecoveryRegenerate)
	r.Register(cmdMFAExchange, "auth.mfa_exchange", e.applyMFAExchange)
	r.Register(cmdPromote, "auth.promote", e.applyPromote)
	r.Register(cmdBatch, "record.batch", e.applyBatch)
	r.Register(cmdCSVImport, "record.csv_import", e.applyCSVImport)
}

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }
