package api

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"strings"
)

// mcpSessions issues and checks Mcp-Session-Id values without state: an
// id is a random nonce and an HMAC binding it to the API token, keyed by
// a key every node of the cluster derives alike, so a client balanced to
// another node keeps its session, and a token revoked mid-session stops at
// authentication whatever its session says.
type mcpSessions struct{ key []byte }

// newMCPSessions derives the key from the cluster's shared secrets (nil:
// a random key, sessions valid on this process only).
func newMCPSessions(secrets func() []byte) *mcpSessions {
	var seed []byte
	if secrets != nil {
		seed = secrets()
	}
	if len(seed) == 0 {
		seed = make([]byte, 32)
		_, _ = rand.Read(seed)
	}
	m := hmac.New(sha256.New, seed)
	m.Write([]byte("svcd mcp session v1"))
	return &mcpSessions{key: m.Sum(nil)}
}

func (m *mcpSessions) mac(nonce, tokenID string) string {
	h := hmac.New(sha256.New, m.key)
	h.Write([]byte(nonce + "\x00" + tokenID))
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

func (m *mcpSessions) issue(tokenID string) string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	nonce := base64.RawURLEncoding.EncodeToString(b)
	return nonce + "." + m.mac(nonce, tokenID)
}

func (m *mcpSessions) valid(id, tokenID string) bool {
	nonce, sig, ok := strings.Cut(id, ".")
	return ok && nonce != "" && hmac.Equal([]byte(sig), []byte(m.mac(nonce, tokenID)))
}
