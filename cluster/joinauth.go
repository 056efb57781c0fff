package cluster

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// A join arrives over HTTP (the --join URLs). It is authenticated with an
// HMAC under a key derived from the cluster key, and the secrets the
// joining node receives (the token signing key) are sealed with AES-GCM
// under another derived key: the HTTP channel may be plain text.
//
// The signature covers a timestamp, a random nonce, the node id of the
// member the request is sent to, and the body. The receiving member
// (JoinVerifier) checks that it names itself, that the timestamp is within
// joinSkew of its clock and not older than its own start, and that it has
// not seen the signature before: a captured join can be replayed neither
// to the member it was sent to nor to another one. The joining side learns
// the member's node id from GET /_/join first (api/cluster.go).
//
// Members before version 2 signed "<unix seconds>.<hex HMAC>" over the
// timestamp and the body only; SignJoinV1 still makes that header for a
// joining node talking to such a member (it does not announce version 2),
// but no member of this version accepts it.

// JoinAuthHeader carries the join signature:
// "v2.<unix milliseconds>.<hex nonce>.<hex HMAC>.<target node id>".
const JoinAuthHeader = "X-Svc-Cluster-Auth"

// JoinAuthVersion is the signature this version makes and accepts; GET
// /_/join announces it.
const JoinAuthVersion = 2

// joinSkew bounds the age of a signed join request (either way: clocks
// differ).
const joinSkew = 60 * time.Second

// Reasons a join request is refused.
var (
	// ErrJoinAuth is a join request without a valid signature.
	ErrJoinAuth = errors.New("cluster: join request not signed with the cluster key")
	// ErrJoinV1 is a join signed the way members before version 2 sign:
	// it names no member and carries no nonce, so it could be replayed.
	ErrJoinV1 = errors.New("cluster: join request signed by a node older than this member (upgrade the joining node)")
	// ErrJoinOtherNode is a valid join signed for another member.
	ErrJoinOtherNode = errors.New("cluster: join request signed for another member")
	// ErrJoinReplayed is a join this member has seen before, or one signed
	// before it started (it cannot tell whether it saw it).
	ErrJoinReplayed = errors.New("cluster: join request already used")
)

// joinNonceBytes is the length of a join's random nonce.
const joinNonceBytes = 16

func joinMACv2(clusterKey string, tsMillis int64, nonce, target string, body []byte) string {
	m := hmac.New(sha256.New, DeriveKey(clusterKey, "join/v2"))
	fmt.Fprintf(m, "%d\n%s\n%s\n", tsMillis, nonce, target)
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// SignJoin returns the JoinAuthHeader value for a join of body sent to the
// member whose node id is target. Each call draws a new nonce, so a retry
// is a new signature.
func SignJoin(clusterKey, target string, now time.Time, body []byte) (string, error) {
	var n [joinNonceBytes]byte
	if _, err := rand.Read(n[:]); err != nil {
		return "", err
	}
	nonce := hex.EncodeToString(n[:])
	ts := now.UnixMilli()
	return "v2." + strconv.FormatInt(ts, 10) + "." + nonce + "." + joinMACv2(clusterKey, ts, nonce, target, body) + "." + target, nil
}

// SignJoinV1 returns the header members before version 2 expect.
func SignJoinV1(clusterKey string, now time.Time, body []byte) string {
	ts := now.Unix()
	m := hmac.New(sha256.New, DeriveKey(clusterKey, "join"))
	m.Write([]byte(strconv.FormatInt(ts, 10)))
	m.Write([]byte{'.'})
	m.Write(body)
	return strconv.FormatInt(ts, 10) + "." + hex.EncodeToString(m.Sum(nil))
}

// joinSignature is a parsed, authenticated JoinAuthHeader.
type joinSignature struct {
	at     time.Time
	mac    string
	target string
}

// verifyJoinSignature checks the header's form, its timestamp against now
// and its HMAC over body; it does not look at the target.
func verifyJoinSignature(clusterKey, header string, now time.Time, body []byte) (joinSignature, error) {
	if clusterKey == "" {
		return joinSignature{}, ErrJoinAuth
	}
	parts := strings.SplitN(header, ".", 5)
	if len(parts) != 5 || parts[0] != "v2" {
		if len(parts) == 2 {
			return joinSignature{}, ErrJoinV1
		}
		return joinSignature{}, ErrJoinAuth
	}
	ts, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil || len(parts[2]) != 2*joinNonceBytes {
		return joinSignature{}, ErrJoinAuth
	}
	at := time.UnixMilli(ts)
	if d := now.Sub(at); d > joinSkew || d < -joinSkew {
		return joinSignature{}, ErrJoinAuth
	}
	if !hmac.Equal([]byte(parts[3]), []byte(joinMACv2(clusterKey, ts, parts[2], parts[4], body))) {
		return joinSignature{}, ErrJoinAuth
	}
	return joinSignature{at: at, mac: parts[3], target: parts[4]}, nil
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
