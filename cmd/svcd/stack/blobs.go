package stack

import (
	"context"
	"errors"
	"io"
	"net"
	"time"

	"svcd/cluster"
	"svcd/cluster/blobs"
	"svcd/engine"
	"svcd/engine/files"
)

// fileStores adapts the node's blob stores (cluster/blobs) to the
// interfaces engine/files owns: the two packages do not know each other.
// The local driver goes through the replicated store: an upload waits
// for a majority of the voters, a missing blob is fetched from a peer.
type fileStores struct {
	s *blobs.Stores
	r *blobs.Replicated
}

func (f fileStores) Store(ctx context.Context, driver string) (files.BlobStore, error) {
	b, err := f.s.Store(ctx, driver)
	if err != nil {
		return nil, err
	}
	if driver == "local" && f.r != nil {
		return fileBucket{f.r}, nil
	}
	return fileBucket{b}, nil
}

// blobStore is what the stores of cluster/blobs (*blobs.Bucket,
// *blobs.Replicated) offer.
type blobStore interface {
	Put(ctx context.Context, key, contentType string, r io.Reader) error
	Open(ctx context.Context, key string) (*blobs.Reader, error)
	Delete(ctx context.Context, key string) error
	List(ctx context.Context, fn func(key string, modified time.Time) error) error
	Shared() bool
	DownloadURL(ctx context.Context, key string, ttl time.Duration) (string, error)
}

// fileBucket is a store of cluster/blobs as a files.BlobStore.
type fileBucket struct{ blobStore }

// Put answers 503 when the bytes did not reach a majority of the voters
// (too many nodes down or unreachable): like a write without a quorum.
func (b fileBucket) Put(ctx context.Context, key, contentType string, r io.Reader) error {
	err := b.blobStore.Put(ctx, key, contentType, r)
	if errors.Is(err, blobs.ErrNoMajority) {
		return &engine.Error{Kind: engine.KindUnavailable, Message: "Not enough nodes are reachable to store the file", RetryAfter: 5}
	}
	return err
}

func (b fileBucket) Open(ctx context.Context, key string) (files.Blob, error) {
	r, err := b.blobStore.Open(ctx, key)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// nodePeers is the Raft node as the replicated store sees its peers. The
// node is opened after the stores (its blob server is the store's), so
// it is read late.
type nodePeers struct{ node func() *cluster.Node }

func (p nodePeers) Members() ([]blobs.Peer, bool, error) {
	n := p.node()
	if n == nil {
		return nil, false, cluster.ErrNoLeader
	}
	servers, err := n.Servers()
	if err != nil {
		return nil, false, err
	}
	var others []blobs.Peer
	self := false
	for _, s := range servers {
		if s.ID == n.NodeID() {
			self = s.Voter
			continue
		}
		others = append(others, blobs.Peer{Addr: s.Addr, Voter: s.Voter})
	}
	return others, self, nil
}

func (p nodePeers) Dial(ctx context.Context, addr string) (net.Conn, error) {
	n := p.node()
	if n == nil {
		return nil, cluster.ErrNoBlobChannel
	}
	return n.DialBlob(ctx, addr)
}
