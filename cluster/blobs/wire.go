package blobs

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"regexp"
	"time"

	"svcd/cluster/frame"
)

// The peer protocol, on a connection of the cluster's blob kind (it has
// passed the cluster-key handshake and TLS when configured). Every
// message is a frame: a 4-byte big-endian length and a JSON object.
//
//	push:  → {op:"push", key, size, sha256}, then exactly size raw bytes
//	       ← {ok} once the bytes are fsynced under key, or {error}
//	fetch: → {op:"fetch", key}
//	       ← {ok, size} then size raw bytes then {sha256}, or {error}
//
// A request may name a space: another directory the node serves the same
// way (dir.go: the files a restore installs); none is the file store.
//
// A receiver writes to a temporary file beside the key, checks the size
// and the SHA-256, fsyncs and renames: a short, long or corrupt stream
// leaves nothing under the key.

// message is one frame of the protocol.
type message struct {
	Op     string `json:"op,omitempty"`
	Key    string `json:"key,omitempty"`
	Size   int64  `json:"size,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
	OK     bool   `json:"ok,omitempty"`
	Error  string `json:"error,omitempty"`
	// Missing says a fetched key is not on the peer.
	Missing bool `json:"missing,omitempty"`
	// Space names the directory of the request ("": the file store).
	Space string `json:"space,omitempty"`
}

const maxMessage = 4 << 10

// idle bounds how long a transfer may make no progress.
const idle = 30 * time.Second

func writeMessage(c net.Conn, m message) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	c.SetWriteDeadline(time.Now().Add(idle))
	return frame.Write(c, b)
}

func readMessage(c net.Conn) (message, error) {
	var m message
	c.SetReadDeadline(time.Now().Add(idle))
	b, err := frame.Read(c, maxMessage)
	if err != nil {
		return m, fmt.Errorf("blobs: peer message: %w", err)
	}
	return m, json.Unmarshal(b, &m)
}

// validKey is a key a peer may push or fetch: a stored name, a single
// path element (never a temporary file, never outside the store).
var validKey = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*(\.[A-Za-z0-9]{1,12})?$`)

// errBadKey refuses a key that is not a stored name.
var errBadKey = errors.New("blobs: not a stored name")

// idleConn refreshes a connection's deadlines before every read and
// write, so a transfer of any size fails only when it stalls.
type idleConn struct{ net.Conn }

func (c idleConn) Read(p []byte) (int, error) {
	c.Conn.SetReadDeadline(time.Now().Add(idle))
	return c.Conn.Read(p)
}

func (c idleConn) Write(p []byte) (int, error) {
	c.Conn.SetWriteDeadline(time.Now().Add(idle))
	return c.Conn.Write(p)
}
