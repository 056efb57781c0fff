// Package passkey is the WebAuthn protocol of engine/auth's passkeys,
// with github.com/go-webauthn/webauthn: the options of a ceremony, and
// the checks of an authenticator's answer (attestation at registration,
// the signature over the challenge at sign-in, origins, relying party id
// hash, user presence and verification, backup flags). It keeps no state:
// engine/auth stores the session and the credential records it answers
// and hands them back. It sits beside the HTTP layer because the library
// speaks net/http, which the engine never imports.
//
// The choices made here: no attestation is asked for (passkeys are not
// restricted to certain authenticator models), user verification is
// required (a PIN or biometrics: what makes a passkey a strong factor on
// its own), and discoverable credentials are preferred (so a sign-in
// needs no email).
package passkey

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"svcd/engine/auth"
)

// Protocol is go-webauthn as engine/auth's PasskeyProtocol.
type Protocol struct{}

var _ auth.PasskeyProtocol = Protocol{}

// relyingParty configures the library for rp.
func relyingParty(rp auth.RelyingParty) (*webauthn.WebAuthn, error) {
	if err := protocol.ValidateRPID(rp.ID); err != nil {
		return nil, &auth.PasskeyRefusal{Config: true, Reason: fmt.Sprintf("relying party id %q: %v", rp.ID, err)}
	}
	wa, err := webauthn.New(&webauthn.Config{
		RPID:                  rp.ID,
		RPDisplayName:         rp.Name,
		RPOrigins:             rp.Origins,
		AttestationPreference: protocol.PreferNoAttestation,
		AuthenticatorSelection: protocol.AuthenticatorSelection{
			ResidentKey:      protocol.ResidentKeyRequirementPreferred,
			UserVerification: protocol.VerificationRequired,
		},
		Timeouts: webauthn.TimeoutsConfig{
			Login:        webauthn.TimeoutConfig{Timeout: rp.Timeout, TimeoutUVD: rp.Timeout},
			Registration: webauthn.TimeoutConfig{Timeout: rp.Timeout, TimeoutUVD: rp.Timeout},
		},
	})
	if err != nil {
		return nil, &auth.PasskeyRefusal{Config: true, Reason: err.Error()}
	}
	return wa, nil
}

// user is an account as the library sees it.
type user struct {
	id, name string
	creds    []webauthn.Credential
}

func (u *user) WebAuthnID() []byte                         { return []byte(u.id) }
func (u *user) WebAuthnName() string                       { return u.name }
func (u *user) WebAuthnDisplayName() string                { return u.name }
func (u *user) WebAuthnCredentials() []webauthn.Credential { return u.creds }

// userOf decodes the stored credential records of u; the sign counter and
// the backup state are the stored ones, which sign-ins keep up to date.
func userOf(u *auth.PasskeyUser) (*user, error) {
	out := &user{id: u.ID, name: u.Name}
	for _, s := range u.Credentials {
		var c webauthn.Credential
		if err := json.Unmarshal(s.Record, &c); err != nil {
			return nil, fmt.Errorf("passkey: stored credential record: %w", err)
		}
		c.Authenticator.SignCount = s.SignCount
		c.Flags.BackupState = s.BackedUp
		out.creds = append(out.creds, c)
	}
	return out, nil
}

// options encodes a ceremony's options and session.
func options(opts any, session *webauthn.SessionData) (*auth.PasskeyOptions, error) {
	o, err := json.Marshal(opts)
	if err != nil {
		return nil, fmt.Errorf("passkey: options: %w", err)
	}
	s, err := json.Marshal(session)
	if err != nil {
		return nil, fmt.Errorf("passkey: session: %w", err)
	}
	return &auth.PasskeyOptions{Options: o, Session: s}, nil
}

// session decodes a stored session.
func session(b []byte) (webauthn.SessionData, error) {
	var s webauthn.SessionData
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("passkey: stored session: %w", err)
	}
	return s, nil
}

// BeginRegistration makes the creation options of a new passkey for u.
func (Protocol) BeginRegistration(rp auth.RelyingParty, u *auth.PasskeyUser) (*auth.PasskeyOptions, error) {
	wa, err := relyingParty(rp)
	if err != nil {
		return nil, err
	}
	usr, err := userOf(u)
	if err != nil {
		return nil, err
	}
	creation, sess, err := wa.BeginRegistration(usr, webauthn.WithExclusions(webauthn.Credentials(usr.creds).CredentialDescriptors()))
	if err != nil {
		return nil, fmt.Errorf("passkey: registration options: %w", err)
	}
	return options(creation, sess)
}

// FinishRegistration checks the answer of navigator.credentials.create.
func (Protocol) FinishRegistration(rp auth.RelyingParty, u *auth.PasskeyUser, sessionJSON, response []byte) (*auth.NewPasskey, error) {
	wa, err := relyingParty(rp)
	if err != nil {
		return nil, err
	}
	usr, err := userOf(u)
	if err != nil {
		return nil, err
	}
	sess, err := session(sessionJSON)
	if err != nil {
		return nil, err
	}
	parsed, err := protocol.ParseCredentialCreationResponseBytes(response)
	if err != nil {
		return nil, &auth.PasskeyRefusal{Malformed: true, Reason: reason(err)}
	}
	cred, err := wa.CreateCredential(usr, sess, parsed)
	if err != nil {
		return nil, &auth.PasskeyRefusal{Reason: reason(err)}
	}
	record, err := json.Marshal(cred)
	if err != nil {
		return nil, fmt.Errorf("passkey: credential record: %w", err)
	}
	return &auth.NewPasskey{CredentialID: cred.ID, Record: record, SignCount: cred.Authenticator.SignCount, BackedUp: cred.Flags.BackupState}, nil
}

// BeginLogin makes the request options of a sign-in.
func (Protocol) BeginLogin(rp auth.RelyingParty, u *auth.PasskeyUser, decoy []byte) (*auth.PasskeyOptions, error) {
	wa, err := relyingParty(rp)
	if err != nil {
		return nil, err
	}
	var assertion *protocol.CredentialAssertion
	var sess *webauthn.SessionData
	switch {
	case u != nil:
		var usr *user
		if usr, err = userOf(u); err != nil {
			return nil, err
		}
		assertion, sess, err = wa.BeginLogin(usr)
	case decoy != nil:
		d := protocol.CredentialDescriptor{Type: protocol.PublicKeyCredentialType, CredentialID: decoy}
		assertion, sess, err = wa.BeginDiscoverableLogin(webauthn.WithAllowedCredentials([]protocol.CredentialDescriptor{d}))
	default:
		assertion, sess, err = wa.BeginDiscoverableLogin()
	}
	if err != nil {
		return nil, fmt.Errorf("passkey: sign-in options: %w", err)
	}
	return options(assertion, sess)
}

// FinishLogin checks the answer of navigator.credentials.get.
func (Protocol) FinishLogin(rp auth.RelyingParty, sessionJSON, response []byte, owner func([]byte) (*auth.PasskeyUser, error)) (*auth.PasskeyAssertion, error) {
	wa, err := relyingParty(rp)
	if err != nil {
		return nil, err
	}
	sess, err := session(sessionJSON)
	if err != nil {
		return nil, err
	}
	parsed, err := protocol.ParseCredentialRequestResponseBytes(response)
	if err != nil {
		return nil, &auth.PasskeyRefusal{Malformed: true, Reason: reason(err)}
	}
	u, err := owner(parsed.RawID)
	if err != nil {
		return nil, err
	}
	if u == nil {
		return nil, &auth.PasskeyRefusal{Reason: "no account of this collection has the passkey"}
	}
	usr, err := userOf(u)
	if err != nil {
		return nil, err
	}
	if len(sess.UserID) > 0 {
		_, err = wa.ValidateLogin(usr, sess, parsed)
	} else {
		_, _, err = wa.ValidatePasskeyLogin(func(_, handle []byte) (webauthn.User, error) {
			if string(handle) != usr.id {
				return nil, errors.New("the user handle is not the passkey's account")
			}
			return usr, nil
		}, sess, parsed)
	}
	if err != nil {
		return nil, &auth.PasskeyRefusal{Reason: reason(err)}
	}
	data := parsed.Response.AuthenticatorData
	return &auth.PasskeyAssertion{CredentialID: parsed.RawID, UserID: usr.id, SignCount: data.Counter, BackedUp: data.Flags.HasBackupState()}, nil
}

// reason is the library's explanation of a failed check.
func reason(err error) string {
	var pe *protocol.Error
	if errors.As(err, &pe) && pe.Details != "" {
		if pe.DevInfo != "" {
			return pe.Details + " (" + pe.DevInfo + ")"
		}
		return pe.Details
	}
	return err.Error()
}
