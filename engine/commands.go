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

	// 81 (record.csv_import) is engine/csv's.
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

func (e *Engine) register() {
	e.registerCoreMigrations()
	e.registerAuthMigrations()
	e.registerCoreSettings()
	e.registerAccountHooks()
	e.registerSearchHooks()
	e.registerAuthSettings()
	e.DefineSettings(SettingDef{Key: "vector.max_candidates", Default: "100000"})
	e.registerRowResult()
	RegisterResult[BatchResult](e, "batch")
	RegisterResult[RotateResult](e, "rotate")
	RegisterResult[flowOutcome](e, "flow")

	e.Command(cmdMigrate, "migrate", e.applyMigrate)
	e.Command(cmdCollectionCreate, "collection.create", e.applyCollectionCreate)
	e.Command(cmdCollectionUpdate, "collection.update", e.applyCollectionUpdate)
	e.Command(cmdCollectionDelete, "collection.delete", e.applyCollectionDelete)
	e.Command(cmdRecordCreate, "record.create", e.applyRecordCreate)
	e.Command(cmdRecordUpdate, "record.update", e.applyRecordUpdate)
	e.Command(cmdRecordDelete, "record.delete", e.applyRecordDelete)
	e.Command(cmdAdminCreate, "admin.create", e.applyAdminCreate)
	e.Command(cmdAdminUpdate, "admin.update", e.applyAdminUpdate)
	e.Command(cmdAdminDelete, "admin.delete", e.applyAdminDelete)
	e.Command(cmdAdminsLogout, "admins.logout", e.applyAdminsLogout)
	e.Command(cmdAdminSession, "admin.session", e.applyAdminSession)
	e.Command(cmdSettingsPatch, "settings.patch", e.applySettingsPatch)
	e.Command(cmdIndexCreate, "index.create", e.applyIndexCreate)
	e.Command(cmdIndexDelete, "index.delete", e.applyIndexDelete)
	e.Command(cmdRotateKey, "key.rotate", e.applyRotateKey)
	e.Command(cmdRevoke, "token.revoke", e.applyRevoke)
	e.Command(cmdLockoutFail, "lockout.fail", e.applyLockoutFail)
	e.Command(cmdLockoutReset, "lockout.reset", e.applyLockoutReset)
	e.Command(cmdAPITokenCreate, "api_token.create", e.applyAPITokenCreate)
	e.Command(cmdAPITokenDelete, "api_token.delete", e.applyAPITokenDelete)
	e.Command(cmdAudit, "audit", e.applyAudit)
	e.Command(cmdPasswordReset, "auth.password_reset", e.applyPasswordReset)
	e.Command(cmdEmailVerify, "auth.email_verify", e.applyEmailVerify)
	e.Command(cmdOTPIssue, "auth.otp_issue", e.applyOTPIssue)
	e.Command(cmdOTPAuth, "auth.otp_auth", e.applyOTPAuth)
	e.Command(cmdTOTPSetup, "auth.totp_setup", e.applyTOTPSetup)
	e.Command(cmdTOTPConfirm, "auth.totp_confirm", e.applyTOTPConfirm)
	e.Command(cmdTOTPDisable, "auth.totp_disable", e.applyTOTPDisable)
	e.Command(cmdRecoveryRegenerate, "auth.recovery_regenerate", e.applyRecoveryRegenerate)
	e.Command(cmdMFAExchange, "auth.mfa_exchange", e.applyMFAExchange)
	e.Command(cmdPromote, "auth.promote", e.applyPromote)
	e.Command(cmdBatch, "record.batch", e.applyBatch)
}

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }
