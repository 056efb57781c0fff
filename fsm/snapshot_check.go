package fsm

import "io"

// SnapshotChecker verifies the checksum trailer of a snapshot stream
// written to it, keeping nothing but the trailer's bytes. The consensus
// layer runs a snapshot through it while storing it, so a snapshot damaged
// on its way from the leader is refused before it is kept (and before a
// restart could try to restore it), not only when Restore reads it.
type SnapshotChecker struct {
	recv *snapshotReceiver
}

// NewSnapshotChecker starts checking a stream.
func NewSnapshotChecker() *SnapshotChecker {
	return &SnapshotChecker{recv: newSnapshotReceiver(io.Discard)}
}

// Write takes the next bytes of the stream.
func (c *SnapshotChecker) Write(p []byte) (int, error) { return c.recv.Write(p) }

// Check ends the stream. It returns an error wrapping ErrSnapshotDamaged
// when the trailer does not match the bytes written, or when the stream has
// none and is not a whole number of pages; a plain database file (no
// trailer, whole pages) passes, and is left to Restore's SQLite checks.
func (c *SnapshotChecker) Check() error {
	_, err := c.recv.finish()
	return err
}
