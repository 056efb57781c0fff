package cluster

import (
	"errors"
	"fmt"

	"svcd/fsm"
)

// ErrUnknownToLeader refuses a write a follower forwarded whose command
// type the leader's binary does not know: during a rolling upgrade a
// newer follower may build such a command while an older node leads.
// Proposing it would stop the leader's state machine (and every older
// replica's) at that entry, so the leader refuses it instead; the client
// gets a 503 and succeeds once the leader runs the new version.
var ErrUnknownToLeader = errors.New("cluster: the leader does not know this command")

// failUnknown prefixes the failure a leader answers for such a command.
const failUnknown = "unknown_command:"

// commandKnower is a state machine that tells, before a command is
// proposed, whether this binary can apply it (fsm.Store).
type commandKnower interface {
	Knows(cmd fsm.Command) bool
}

// refuseUnknown returns the failure to answer for a forwarded cmd this
// node's state machine cannot apply, or "".
func (n *Node) refuseUnknown(cmd fsm.Command) string {
	k, ok := n.sm.(commandKnower)
	if !ok || k.Knows(cmd) {
		return ""
	}
	return fmt.Sprintf("%sThe leader (%s) runs an older version that does not know command type %d; retry once every node is upgraded",
		failUnknown, n.cfg.NodeID, cmd.Type)
}
