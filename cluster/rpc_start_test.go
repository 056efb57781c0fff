package cluster

import (
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"svcd/cluster/frame"
)

// TestRPCBeforeRaftStarts: an RPC that reaches a node whose raft is not
// started yet (a peer's status probe while the node restores a snapshot
// at start) gets a closed connection, not a crash. Found by the fault
// suite: a restarted node died with a nil pointer in LocalStatus.
func TestRPCBeforeRaftStarts(t *testing.T) {
	n := &Node{cfg: Config{NodeID: "n1"}}
	for _, kind := range []byte{connStatus, connForward, connIndex, connJoin} {
		srv, cli := net.Pipe()
		done := make(chan struct{})
		go func() {
			defer close(done)
			n.serveRPC(kind, srv)
		}()
		cli.SetDeadline(time.Now().Add(2 * time.Second))
		go frame.Write(cli, []byte("{}"))
		if _, err := frame.Read(cli, maxFrame); !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrClosedPipe) {
			t.Fatalf("kind %c: want a closed connection, got %v", kind, err)
		}
		<-done
		cli.Close()
	}
}
