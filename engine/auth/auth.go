// Package auth is the engine's module of sign-in and accounts: admins and
// their roles, sessions and API tokens; users of auth collections with
// password sign-in, registration, refresh and logout; the account flows
// (password reset, email verification, email OTP, TOTP with recovery
// codes, MFA, anonymous accounts and promote); lockout, impersonation,
// revocation and the audit log; and the credential checks that hold for
// as long as a credential is used (Authenticate, Recheck,
// CredentialsTouched).
//
// It registers its commands (30-34, 60-65, 70-79, 115-119, 120-124), its
// internal tables, settings and record hooks on the core
// (engine/DESIGN.md). Auth keeps the credentials and the user flows;
// Admins, Factors and Passkeys are its admin, second-factor and passkey
// services.
package auth

import (
	"context"
	"fmt"
	"sync/atomic"

	"svcd/engine"
	"svcd/engine/token"
	"svcd/fsm"
)

// Options configure the auth module.
type Options struct {
	// Signer signs and verifies session tokens.
	Signer *token.Signer
	// Outbound makes HTTP requests to the outside through the SSRF guard
	// (mail relays are SMTP; this is for the password breach check).
	Outbound engine.Outbound
	// OAuth2 exchanges OAuth2 codes with providers (through the SSRF
	// guard); nil: OAuth2 sign-in answers 503.
	OAuth2 OAuth2Client
	// Passkeys is the WebAuthn protocol (nil: the passkey endpoints
	// answer 503).
	Passkeys PasskeyProtocol
}

// Auth is the module of sign-in and accounts: admins and their sessions,
// API tokens, user sessions and the account flows (reset, verification,
// OTP, TOTP, MFA, anonymous accounts, promote), passkeys, lockout,
// impersonation, revocation and the audit log. It owns commands 30-34,
// 60-65, 70-79 and 120-124 and the internal tables of migrations 1-3, 5
// and 8 that hold that state.
type Auth struct {
	core   *engine.Engine
	signer *token.Signer
	// outbound is the SSRF-guarded client.
	outbound engine.Outbound

	admins  atomic.Pointer[adminSet]
	revoked revokedSet
	tokens  atomic.Pointer[apiTokenSet] // API tokens by hash and id
	// mailSlots holds a token per background auth mail in flight.
	mailSlots chan struct{}

	adm *Admins
	fac *Factors
	oa  *OAuth2
	pk  *Passkeys
}

// New wires the auth module to core: its migrations, settings, hooks and
// commands, and its caches of admins, revoked tokens and API tokens, kept
// fresh from committed events. Call it before core.Seal.
func New(core *engine.Engine, opts Options) (*Auth, error) {
	au := &Auth{core: core, signer: opts.Signer, outbound: opts.Outbound, mailSlots: make(chan struct{}, mailSlots)}
	au.adm, au.fac, au.pk = &Admins{au: au}, &Factors{au: au}, &Passkeys{au: au, proto: opts.Passkeys}
	au.admins.Store(&adminSet{byID: map[string]*Admin{}, byEmail: map[string]*Admin{}})
	au.tokens.Store(&apiTokenSet{byHash: map[string]*APIToken{}, byID: map[string]*APIToken{}})
	au.register()
	au.registerPruner()
	au.oa = newOAuth2(au, opts.OAuth2)
	au.oa.register()
	core.OnEvents(au.onEvents)
	if err := au.reloadAll(context.Background()); err != nil {
		return nil, fmt.Errorf("auth: %w", err)
	}
	return au, nil
}

// reloadAll fills the caches from the replica (nothing before the first
// migration).
func (au *Auth) reloadAll(ctx context.Context) error {
	v := au.core.InternalVersion()
	if v == 0 {
		return nil
	}
	if err := au.adm.reloadAdmins(ctx); err != nil {
		return err
	}
	if v < 2 {
		return nil
	}
	if err := au.reloadRevoked(ctx); err != nil {
		return err
	}
	return au.adm.reloadAPITokens(ctx)
}

// onEvents rebuilds the caches that committed commands invalidated.
func (au *Auth) onEvents(events []fsm.Event) {
	var admins, revoked, tokens bool
	for _, ev := range events {
		switch ev.Kind {
		case evAPITokens:
			tokens = true
		case evRevoked:
			au.revoked.add(ev.Subject)
		case evAdmins, evAdminHash:
			admins = true
		case fsm.KindRestore, engine.EvMigrate:
			admins, revoked, tokens = true, true, true
		}
	}
	ctx := context.Background()
	log := au.core.Logger()
	if admins {
		if err := au.adm.reloadAdmins(ctx); err != nil {
			log.Error("reload admins", "err", err)
		}
	}
	v := au.core.InternalVersion()
	if revoked && v >= 2 {
		if err := au.reloadRevoked(ctx); err != nil {
			log.Error("reload revoked tokens", "err", err)
		}
	}
	if tokens && v >= 2 {
		if err := au.adm.reloadAPITokens(ctx); err != nil {
			log.Error("reload API tokens", "err", err)
		}
	}
}

// Admins manages admin accounts, their sessions, API tokens and the audit
// log.
type Admins struct{ au *Auth }

// Factors are the second factors of user accounts: TOTP with recovery
// codes, and the MFA step of a sign-in.
type Factors struct{ au *Auth }

// Admins is the module's admin service.
func (au *Auth) Admins() *Admins { return au.adm }

// Factors is the module's second-factor service.
func (au *Auth) Factors() *Factors { return au.fac }
