package engine

import (
	"svcd/engine/crypt"
)

// Encryption at rest: `encrypted` field values and secret settings are
// sealed (engine/crypt) before they are proposed, so the log and every
// replica's database hold only ciphertext, and opened when records and
// settings are read on a node that has the key. Encrypted fields cannot be
// filtered, sorted or used in rules (the state machine never holds the
// key), nor be unique.

// seal seals a normalized field value (text, email, url, json).
func (e *Engine) seal(stored any) (any, string) {
	var plain string
	switch v := stored.(type) {
	case string:
		plain = v
	case []byte:
		plain = string(v)
	default:
		return stored, ""
	}
	if e.keyring == nil {
		return stored, ""
	}
	s, err := e.keyring.Seal(plain)
	if err != nil {
		return nil, "could not be encrypted"
	}
	return s, ""
}

// open returns the plain value of a stored field value for rendering:
// sealed strings are opened when this node has the key (a value it cannot
// open is shown as stored, so nothing is lost or invented).
func (ci *Coll) open(v any) any {
	s, ok := v.(string)
	if !ok || ci.keyring == nil || !crypt.IsSealed(s) {
		return v
	}
	plain, err := ci.keyring.Open(s)
	if err != nil {
		return v
	}
	return plain
}

// sealSetting seals a secret setting's value when a key is set.
func (e *Engine) sealSetting(k, v string) (string, error) {
	if e.keyring == nil || v == "" || !e.IsSecretSetting(k) || crypt.IsSealed(v) {
		return v, nil
	}
	return e.keyring.Seal(v)
}

// openSetting opens a sealed setting value; one this node cannot open
// reads as empty (and is logged), never as ciphertext.
func (e *Engine) openSetting(k, v string) string {
	if !crypt.IsSealed(v) {
		return v
	}
	if e.keyring == nil {
		e.log.Error("a secret setting is encrypted but this node has no encryption key", "key", k)
		return ""
	}
	plain, err := e.keyring.Open(v)
	if err != nil {
		e.log.Error("a secret setting cannot be decrypted", "key", k, "err", err)
		return ""
	}
	return plain
}
