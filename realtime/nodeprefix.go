package realtime

import (
	"crypto/sha256"
	"encoding/hex"
)

// NodePrefixLen is the length of NodePrefix's answer.
const NodePrefixLen = 8

// NodePrefix is the mark a node puts before its client ids
// (ConnOptions.IDPrefix): 8 hex digits of the node id's SHA-256, so that
// any member can tell which member holds a client id's stream.
func NodePrefix(nodeID string) string {
	sum := sha256.Sum256([]byte(nodeID))
	return hex.EncodeToString(sum[:])[:NodePrefixLen]
}
