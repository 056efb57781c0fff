package auth

import (
	"errors"

	"svcd/engine"
	"svcd/fsm"
)

// Passkeys (WebAuthn, SPEC.md Authentication 7): a signed-in user
// registers a passkey, and anyone signs in with one. The protocol's
// checks are go-webauthn's, reached through PasskeyProtocol
// (webauthn_protocol.go); this service keeps the state.
//
// Each ceremony has two steps, options then verify, which may reach
// different nodes. The options step draws a challenge and stores it, with
// the rest of the library's session data, as a ticket: a row of
// _svc_webauthn_tickets written through the log (command 120), keyed by a
// keyed hash of the random ticket string the client gets. The verify step
// reads the ticket on the replica it reaches (the HTTP layer first waits
// for the leader's commit index, so a ticket stored anywhere is there),
// checks the authenticator's answer against it, and proposes a command
// that consumes the ticket and records the outcome (121 register, 122
// sign-in). The apply decides what must hold for the whole cluster: the
// ticket still exists (so it is used once, whichever nodes two attempts
// reach) and has not expired at the proposer's clock, and, for a sign-in,
// the sign counter (webauthn_login.go). Expired tickets are removed when
// the next one is stored.
//
// A sign-in with a passkey answers a session even for an account with
// TOTP on: user verification is required (PIN or biometrics on the
// authenticator), so the passkey is possession and knowledge (or
// inherence) at once, a strong factor by itself.
//
// The files: webauthn_protocol.go (what the service needs of the
// protocol), webauthn_rp.go (the relying party from the settings),
// webauthn_store.go (tables, reads, cleanup), webauthn_ticket.go,
// webauthn_register.go, webauthn_login.go, webauthn_manage.go (list,
// rename, delete).

// Command types of passkeys (120-124; engine/DESIGN.md).
const (
	cmdPasskeyCeremony fsm.Type = 120
	cmdPasskeyRegister fsm.Type = 121
	cmdPasskeyLogin    fsm.Type = 122
	cmdPasskeyDelete   fsm.Type = 123
	cmdPasskeyRename   fsm.Type = 124
)

// passkeysVersion is the internal schema version that creates the
// passkey tables.
const passkeysVersion = 15

// Purposes of the keys derived from the signing key for passkeys.
const (
	keyPasskeyTicket = "webauthn tickets v1"
	keyPasskeyDecoy  = "webauthn decoys v1"
)

// Passkeys is the passkey service of the auth module.
type Passkeys struct {
	au    *Auth
	proto PasskeyProtocol
}

// Passkeys is the module's passkey service.
func (au *Auth) Passkeys() *Passkeys { return au.pk }

var (
	errPasskeysOff    = errFeatureOff("Passkey sign-in")
	errPasskeyTicket  = &engine.Error{Kind: engine.KindUnauthorized, Message: "Invalid or expired passkey ticket"}
	errRegisterTicket = &engine.Error{Kind: engine.KindBadRequest, Message: "Invalid or expired passkey ticket"}
	errPasskeyUnknown = &engine.Error{Kind: engine.KindNotFound, Message: "Passkey not found"}
	errPasskeyTaken   = &engine.Error{Kind: engine.KindConflict, Message: "This passkey is registered already"}
	errPasskeysFull   = &engine.Error{Kind: engine.KindValidation, Message: "An account can have at most 20 passkeys; delete one first"}
	errImpersonated   = &engine.Error{Kind: engine.KindForbidden, Message: "An impersonation session cannot add a passkey"}
)

// maxPasskeys is how many passkeys one account may have.
const maxPasskeys = 20

// register wires the passkey tables, settings, hooks and commands.
func (pk *Passkeys) register() {
	pk.registerMigration()
	pk.au.core.DefineSettings(engine.Defaults(
		"webauthn.rp_id", "",
		"webauthn.origins", "",
		"webauthn.rp_name", "",
	)...)
	pk.registerCleanup()
	c := pk.au.core
	c.Command(cmdPasskeyCeremony, "webauthn.ceremony", pk.applyCeremony)
	c.Command(cmdPasskeyRegister, "webauthn.register", pk.applyRegister)
	c.Command(cmdPasskeyLogin, "webauthn.login", pk.applyLogin)
	c.Command(cmdPasskeyDelete, "webauthn.delete", pk.applyDelete)
	c.Command(cmdPasskeyRename, "webauthn.rename", pk.applyRename)
}

// feature resolves auth collection name with the feature switch on.
func (pk *Passkeys) feature(name string) (*engine.Coll, error) {
	ci, err := pk.au.authCollection(name)
	if err != nil {
		return nil, err
	}
	if !pk.au.authFeature(ci, "webauthn") {
		return nil, errPasskeysOff
	}
	return ci, nil
}

// gate is feature for the ceremonies, which also need the protocol and
// the relying party.
func (pk *Passkeys) gate(name string) (*engine.Coll, RelyingParty, error) {
	ci, err := pk.feature(name)
	if err != nil {
		return nil, RelyingParty{}, err
	}
	if pk.proto == nil {
		return nil, RelyingParty{}, errNoPasskeyProtocol
	}
	rp, err := pk.relyingParty()
	return ci, rp, err
}

// refused maps an error of the protocol: a refusal of the configuration
// is 422, of the answer notVerified (malformed answers are 422 with
// details.response); other errors pass.
func refused(err error, notVerified func(reason string) error) error {
	var r *PasskeyRefusal
	switch {
	case !errors.As(err, &r):
		return err
	case r.Config:
		return engine.Errorf(engine.KindValidation, "Passkeys are misconfigured: %s", r.Reason)
	case r.Malformed:
		return engine.FieldError("response", "is not a WebAuthn answer: "+r.Reason)
	}
	return notVerified(r.Reason)
}
