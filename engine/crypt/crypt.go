// Package crypt owns encryption at rest: the keys of SVC_ENCRYPTION_KEY
// and SVC_ENCRYPTION_KEY_OLD, AES-256-GCM sealing of secret settings and
// `encrypted` field values, and the self-describing text form they are
// stored in: "enc:v1:<key id>:<base64(nonce | ciphertext | tag)>". The key
// id (a hash prefix of the key) lets any node pick the right key among the
// current and the old ones, and lets key rotation skip values already
// under the current key. Values are sealed before they are proposed (a
// random nonce each), so every replica stores the same bytes.
package crypt

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Prefix starts every sealed value.
const Prefix = "enc:v1:"

// KeySize is the AES-256 key length.
const KeySize = 32

// ErrNoKey is returned when a value was sealed with a key the ring lacks.
var ErrNoKey = errors.New("crypt: the value was sealed with a key this node does not have (set SVC_ENCRYPTION_KEY or SVC_ENCRYPTION_KEY_OLD)")

// ParseKey reads a key in one of SPEC.md's forms: base64 (standard or URL
// alphabet, padded or not) of 32 bytes, 64 hex digits, or 32 characters
// used as they are.
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if len(s) == 64 {
		if b, err := hex.DecodeString(s); err == nil {
			return b, nil
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil && len(b) == KeySize {
			return b, nil
		}
	}
	if len(s) == KeySize {
		return []byte(s), nil
	}
	return nil, fmt.Errorf("crypt: an encryption key must be base64 of 32 bytes, 64 hex digits or 32 characters (got %d characters)", len(s))
}

type key struct {
	id   string
	raw  []byte
	aead cipher.AEAD
}

func newKey(raw []byte) (*key, error) {
	block, err := aes.NewCipher(raw)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(append([]byte("svc-encryption-key-id\x00"), raw...))
	return &key{id: hex.EncodeToString(sum[:4]), raw: raw, aead: aead}, nil
}

// Keyring is the current key and the old ones still accepted for opening.
type Keyring struct {
	current *key
	byID    map[string]*key
}

// NewKeyring builds a ring from the current key and the old keys (each in
// a ParseKey form).
func NewKeyring(current string, old []string) (*Keyring, error) {
	cur, err := ParseKey(current)
	if err != nil {
		return nil, fmt.Errorf("SVC_ENCRYPTION_KEY: %w", err)
	}
	k, err := newKey(cur)
	if err != nil {
		return nil, err
	}
	r := &Keyring{current: k, byID: map[string]*key{k.id: k}}
	for i, o := range old {
		if strings.TrimSpace(o) == "" {
			continue
		}
		raw, err := ParseKey(o)
		if err != nil {
			return nil, fmt.Errorf("SVC_ENCRYPTION_KEY_OLD[%d]: %w", i, err)
		}
		ok, err := newKey(raw)
		if err != nil {
			return nil, err
		}
		if _, dup := r.byID[ok.id]; !dup {
			r.byID[ok.id] = ok
		}
	}
	return r, nil
}

// Current is the raw current key (to hand to a joining node).
func (r *Keyring) Current() []byte { return append([]byte(nil), r.current.raw...) }

// CurrentID is the id of the current key.
func (r *Keyring) CurrentID() string { return r.current.id }

// Fingerprint identifies the current key without revealing it:
// "sha256:<hex>" of the key.
func (r *Keyring) Fingerprint() string {
	sum := sha256.Sum256(r.current.raw)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// IsSealed reports whether s is in the sealed form.
func IsSealed(s string) bool { return strings.HasPrefix(s, Prefix) }

// KeyID is the key id of a sealed value ("" if s is not sealed).
func KeyID(s string) string {
	rest, ok := strings.CutPrefix(s, Prefix)
	if !ok {
		return ""
	}
	id, _, _ := strings.Cut(rest, ":")
	return id
}

// Seal encrypts plain under the current key with a random nonce.
func (r *Keyring) Seal(plain string) (string, error) { return r.sealWith(plain, rand.Reader) }

func (r *Keyring) sealWith(plain string, rnd io.Reader) (string, error) {
	nonce := make([]byte, r.current.aead.NonceSize())
	if _, err := io.ReadFull(rnd, nonce); err != nil {
		return "", err
	}
	// The key id is authenticated data: a value cannot be relabelled.
	ct := r.current.aead.Seal(nonce, nonce, []byte(plain), []byte(r.current.id))
	return Prefix + r.current.id + ":" + base64.RawStdEncoding.EncodeToString(ct), nil
}

// Open decrypts a sealed value with whichever key of the ring sealed it.
// A value that is not sealed is returned as it is (stored before a key
// was set).
func (r *Keyring) Open(s string) (string, error) {
	rest, ok := strings.CutPrefix(s, Prefix)
	if !ok {
		return s, nil
	}
	id, b64, ok := strings.Cut(rest, ":")
	if !ok {
		return "", errors.New("crypt: malformed sealed value")
	}
	k := r.byID[id]
	if k == nil {
		return "", ErrNoKey
	}
	ct, err := base64.RawStdEncoding.DecodeString(b64)
	if err != nil || len(ct) < k.aead.NonceSize() {
		return "", errors.New("crypt: malformed sealed value")
	}
	plain, err := k.aead.Open(nil, ct[:k.aead.NonceSize()], ct[k.aead.NonceSize():], []byte(id))
	if err != nil {
		return "", errors.New("crypt: the sealed value does not authenticate")
	}
	return string(plain), nil
}
