package auth

import (
	"encoding/json"
	"time"

	"svcd/engine"
)

// PasskeyProtocol is the WebAuthn protocol the passkey service needs: the
// options of a ceremony and the checks of an authenticator's answer. The
// node passes go-webauthn's (api/passkey): the library speaks net/http,
// which the engine never imports. The protocol keeps no state; the
// service stores what it answers (the session in the ticket, the
// credential record with the passkey) and hands it back.
//
// Every method answers a *PasskeyRefusal for what the configuration or
// the client got wrong; any other error is the node's own.
type PasskeyProtocol interface {
	// BeginRegistration makes the creation options of a new passkey for
	// user, excluding the credentials it has.
	BeginRegistration(rp RelyingParty, user *PasskeyUser) (*PasskeyOptions, error)
	// FinishRegistration checks the answer of navigator.credentials.create
	// (the PublicKeyCredential as JSON) against the session of the
	// options, and answers the new credential.
	FinishRegistration(rp RelyingParty, user *PasskeyUser, session, response []byte) (*NewPasskey, error)
	// BeginLogin makes the request options of a sign-in: for the
	// credentials of user, or, when user is nil, a discoverable sign-in
	// that lists decoy as its only credential when decoy is not nil.
	BeginLogin(rp RelyingParty, user *PasskeyUser, decoy []byte) (*PasskeyOptions, error)
	// FinishLogin checks the answer of navigator.credentials.get against
	// the session of the options. owner names the account that holds the
	// answer's credential id, with its passkeys (nil: none may use it).
	FinishLogin(rp RelyingParty, session, response []byte, owner func(credentialID []byte) (*PasskeyUser, error)) (*PasskeyAssertion, error)
}

// RelyingParty is the relying party of a ceremony (webauthn_rp.go), and
// the time the browser is given to answer (the ticket's lifetime).
type RelyingParty struct {
	ID      string
	Name    string
	Origins []string
	Timeout time.Duration
}

// PasskeyUser is an account as the protocol sees it: its id (the user
// handle of its passkeys), its email (the name an authenticator shows)
// and its passkeys.
type PasskeyUser struct {
	ID          string
	Name        string
	Credentials []StoredPasskey
}

// StoredPasskey is a passkey as stored: the protocol's credential record,
// and what sign-ins change, kept apart (the sign counter and the backup
// state).
type StoredPasskey struct {
	Record    []byte
	SignCount uint32
	BackedUp  bool
}

// PasskeyOptions are a ceremony's options for the browser (the WebAuthn
// JSON form, {"publicKey": {...}}) and the session to check its answer
// against.
type PasskeyOptions struct {
	Options json.RawMessage
	Session []byte
}

// NewPasskey is a credential a registration verified.
type NewPasskey struct {
	CredentialID []byte
	Record       []byte
	SignCount    uint32
	BackedUp     bool
}

// PasskeyAssertion is a sign-in the protocol verified: the credential,
// its account, and what the authenticator reported.
type PasskeyAssertion struct {
	CredentialID []byte
	UserID       string
	SignCount    uint32
	BackedUp     bool
}

// PasskeyRefusal is why the protocol refused: a relying party it cannot
// use (Config), an answer that is not one (Malformed), or an answer that
// does not verify (neither).
type PasskeyRefusal struct {
	Config    bool
	Malformed bool
	Reason    string
}

func (r *PasskeyRefusal) Error() string { return r.Reason }

var errNoPasskeyProtocol = &engine.Error{Kind: engine.KindUnavailable, Message: "Passkeys are not available on this node"}
