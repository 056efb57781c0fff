package auth

import (
	"svcd/engine"
	"svcd/fsm"
)

// Command types owned by the auth module. Numbers are never reused; the
// core's and other modules' are listed in engine/DESIGN.md.
const (
	cmdAdminCreate    fsm.Type = 30
	cmdAdminUpdate    fsm.Type = 31
	cmdAdminDelete    fsm.Type = 32
	cmdAdminsLogout   fsm.Type = 33
	cmdAdminSession   fsm.Type = 34
	cmdRevoke         fsm.Type = 60
	cmdLockoutFail    fsm.Type = 61
	cmdLockoutReset   fsm.Type = 62
	cmdAPITokenCreate fsm.Type = 63
	cmdAPITokenDelete fsm.Type = 64
	cmdAudit          fsm.Type = 65

	// The account flows.
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
	cmdEmailChange        fsm.Type = 167
)

// Event kinds emitted by the module's handlers.
const (
	evAdmins    = engine.EvAdmins
	evRevoked   = "revoked"
	evAPITokens = "api_tokens"
)

// register wires the module's migrations, settings, hooks, result codec
// and command handlers to the core.
func (au *Auth) register() {
	au.registerAuthMigrations()
	au.registerAuthSettings()
	au.registerAccountHooks()
	au.registerRestoreCarrier()
	engine.RegisterResult[flowOutcome](au.core, "flow")

	c := au.core
	c.Command(cmdAdminCreate, "admin.create", au.adm.applyAdminCreate)
	c.Command(cmdAdminUpdate, "admin.update", au.adm.applyAdminUpdate)
	c.Command(cmdAdminDelete, "admin.delete", au.adm.applyAdminDelete)
	c.Command(cmdAdminsLogout, "admins.logout", au.adm.applyAdminsLogout)
	c.Command(cmdAdminSession, "admin.session", au.adm.applyAdminSession)
	c.Command(cmdRevoke, "token.revoke", au.applyRevoke)
	c.Command(cmdLockoutFail, "lockout.fail", au.applyLockoutFail)
	c.Command(cmdLockoutReset, "lockout.reset", au.applyLockoutReset)
	c.Command(cmdAPITokenCreate, "api_token.create", au.adm.applyAPITokenCreate)
	c.Command(cmdAPITokenDelete, "api_token.delete", au.adm.applyAPITokenDelete)
	c.Command(cmdAudit, "audit", au.adm.applyAudit)
	c.Command(cmdPasswordReset, "auth.password_reset", au.applyPasswordReset)
	c.Command(cmdEmailVerify, "auth.email_verify", au.applyEmailVerify)
	c.Command(cmdOTPIssue, "auth.otp_issue", au.applyOTPIssue)
	c.Command(cmdOTPAuth, "auth.otp_auth", au.applyOTPAuth)
	c.Command(cmdTOTPSetup, "auth.totp_setup", au.fac.applyTOTPSetup)
	c.Command(cmdTOTPConfirm, "auth.totp_confirm", au.fac.applyTOTPConfirm)
	c.Command(cmdTOTPDisable, "auth.totp_disable", au.fac.applyTOTPDisable)
	c.Command(cmdRecoveryRegenerate, "auth.recovery_regenerate", au.fac.applyRecoveryRegenerate)
	c.Command(cmdMFAExchange, "auth.mfa_exchange", au.fac.applyMFAExchange)
	c.Command(cmdPromote, "auth.promote", au.applyPromote)
	c.Command(cmdEmailChange, "auth.email_change", au.applyEmailChange)
	c.Command(cmdRehashPassword, "auth.rehash_password", au.applyRehashPassword)
	c.Command(cmdRehashAdminPassword, "auth.rehash_admin_password", au.adm.applyRehashAdminPassword)
	au.registerUserLogout()
	au.pk.register()
}
