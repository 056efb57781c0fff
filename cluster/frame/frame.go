// Package frame is the length-prefixed framing the cluster's own
// connections speak (forwarded commands, read indexes, blob transfers): a
// 4-byte big-endian length, then that many bytes. It is a leaf: both the
// cluster and its blob store use it.
package frame

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
)

// Write writes b as one frame: its length and its bytes, gathered in one
// system call on a network connection, without copying b.
func Write(w io.Writer, b []byte) error {
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(b)))
	bufs := net.Buffers{n[:], b}
	_, err := bufs.WriteTo(w)
	return err
}

// Read reads one frame of at most limit bytes; a longer one is refused
// before anything of it is allocated.
func Read(r io.Reader, limit uint32) ([]byte, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	size := binary.BigEndian.Uint32(n[:])
	if size > limit {
		return nil, fmt.Errorf("frame of %d bytes (at most %d)", size, limit)
	}
	b := make([]byte, size)
	_, err := io.ReadFull(r, b)
	return b, err
}
