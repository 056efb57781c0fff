package cluster

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"
)

// A join arrives over HTTP (the --join URLs). It is authenticated with an
// HMAC over a timestamp and the body under a key derived from the cluster
// key, and the secrets the joining node receives (the token signing key)
// are sealed with AES-GCM under another derived key: the HTTP channel may
// be plain text.

// JoinAuthHeader carries "<unix seconds>.<hex HMAC>".
const JoinAuthHeader = "X-Svc-Cluster-Auth"

// joinSkew bounds the age of a signed join request.
const joinSkew = 60 * time.Second

// ErrJoinAuth is a join request without a valid signature.
var ErrJoinAuth = errors.New("cluster: join request not signed with the cluster key")

func joinMAC(clusterKey string, ts int64, body []byte) string {
	m := hmac.New(sha256.New, DeriveKey(clusterKey, "join"))
	m.Write([]byte(strconv.FormatInt(ts, 10)))
	m.Write([]byte{'.'})
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// SignJoin returns the JoinAuthHeader value for body.
func SignJoin(clusterKey string, now time.Time, body []byte) string {
	ts := now.Unix()
	return strconv.FormatInt(ts, 10) + "." + joinMAC(clusterKey, ts, body)
}

// VerifyJoin checks a JoinAuthHeader value.
func VerifyJoin(clusterKey, header string, now time.Time, body []byte) error {
	if clusterKey == "" {
		return ErrJoinAuth
	}
	tsText, mac, ok := strings.Cut(header, ".")
	if !ok {
		return ErrJoinAuth
	}
	ts, err := strconv.ParseInt(tsText, 10, 64)
	if err != nil {
		return ErrJoinAuth
	}
	if d := now.Sub(time.Unix(ts, 0)); d > joinSkew || d < -joinSkew {
		return ErrJoinAuth
	}
	if !hmac.Equal([]byte(mac), []byte(joinMAC(clusterKey, ts, body))) {
		return ErrJoinAuth
	}
	return nil
}

// Seal encrypts plaintext for a member holding the cluster key.
func Seal(clusterKey string, plaintext []byte) ([]byte, error) {
	gcm, err := secretsAEAD(clusterKey)
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, gcm.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return gcm.Seal(nonce, nonce, plaintext, nil), nil
}

// Unseal decrypts what Seal produced.
func Unseal(clusterKey string, sealed []byte) ([]byte, error) {
	gcm, err := secretsAEAD(clusterKey)
	if err != nil {
		return nil, err
	}
	if len(sealed) < gcm.NonceSize() {
		return nil, errors.New("cluster: sealed secrets too short")
	}
	return gcm.Open(nil, sealed[:gcm.NonceSize()], sealed[gcm.NonceSize():], nil)
}

func secretsAEAD(clusterKey string) (cipher.AEAD, error) {
	block, err := aes.NewCipher(DeriveKey(clusterKey, "secrets"))
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}
