package cluster

import (
	"context"
	"errors"
	"net"
	"time"
)

// ErrNoBlobChannel means this node has no authenticated channel to its
// peers (single-node mode, or no cluster key): it cannot push or fetch
// the bytes of files.
var ErrNoBlobChannel = errors.New("cluster: no authenticated channel to other nodes")

// DialBlob opens a connection of the blob kind to the node at Raft
// address addr, through the cluster-key handshake (and TLS when
// configured): the peer's Config.BlobServer answers it.
func (n *Node) DialBlob(ctx context.Context, addr string) (net.Conn, error) {
	if n.sl == nil {
		return nil, ErrNoBlobChannel
	}
	timeout := 5 * time.Second
	if d, ok := ctx.Deadline(); ok && time.Until(d) < timeout {
		timeout = time.Until(d)
	}
	return n.sl.dialKind(addr, connBlob, timeout)
}
