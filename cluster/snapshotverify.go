package cluster

import (
	"fmt"

	"github.com/hashicorp/raft"

	"svcd/fsm"
)

// checkedSink checks the snapshot stream it stores against the stream's
// checksum trailer (fsm.SnapshotChecker). Raft keeps a snapshot received
// from the leader before it restores it; without this check, a snapshot
// damaged on the way would be refused by Restore but kept as this node's
// latest, and a restart would try to restore it again. Close refuses such
// a stream and cancels it instead: nothing is kept, raft reports the failed
// install to the leader, and the leader sends the snapshot again.
type checkedSink struct {
	raft.SnapshotSink
	check *fsm.SnapshotChecker
}

func newCheckedSink(sink raft.SnapshotSink) *checkedSink {
	return &checkedSink{SnapshotSink: sink, check: fsm.NewSnapshotChecker()}
}

// Write stores p and checks what was stored.
func (k *checkedSink) Write(p []byte) (int, error) {
	n, err := k.SnapshotSink.Write(p)
	k.check.Write(p[:n])
	return n, err
}

// Close keeps the snapshot if its checksum matches, and cancels it if not.
func (k *checkedSink) Close() error {
	if err := k.check.Check(); err != nil {
		k.SnapshotSink.Cancel()
		return fmt.Errorf("cluster: snapshot %s refused: %w", k.ID(), err)
	}
	return k.SnapshotSink.Close()
}
