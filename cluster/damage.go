package cluster

import (
	"errors"
	"fmt"
)

// ErrDamaged marks Raft state on disk (the log file, a snapshot) that
// cannot be used as it is: the node refuses to start on it rather than
// panic, skip an entry or silently lose one. A cluster member is repaired
// from its peers (svcd repair reseed), a lone node from a backup
// (docs/operations.md).
var ErrDamaged = errors.New("cluster: damaged Raft state")

// ErrLogLocked is a Raft log file held by another process (another svcd
// on the same data directory).
var ErrLogLocked = errors.New("cluster: the Raft log is locked by another process")

// DamageError describes damage found in a file of the Raft state. It
// matches ErrDamaged.
type DamageError struct {
	// File is the damaged file.
	File string
	// Index is the first log entry that is not intact, 0 when the damage
	// is not in an entry (the file's structure, the stable store, a
	// snapshot).
	Index uint64
	// What is wrong.
	What string
}

func (e *DamageError) Error() string {
	if e.Index > 0 {
		return fmt.Sprintf("cluster: %s is damaged at log entry %d: %s", e.File, e.Index, e.What)
	}
	return fmt.Sprintf("cluster: %s is damaged: %s", e.File, e.What)
}

// Is makes a DamageError match ErrDamaged.
func (e *DamageError) Is(target error) bool { return target == ErrDamaged }
