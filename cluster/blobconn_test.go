package cluster

import (
	"io"
	"log/slog"
	"net"
	"testing"
	"time"
)

// TestBlobConnNeedsTheClusterKey: a connection of the blob kind reaches
// the blob server only through the cluster-key handshake; a peer with
// another key is refused before the server sees a byte.
func TestBlobConnNeedsTheClusterKey(t *testing.T) {
	served := make(chan byte, 4)
	opt := streamOptions{rpc: func(kind byte, c net.Conn) {
		defer c.Close()
		served <- kind
		c.Write([]byte("ok"))
	}}
	l, err := newAuthStreamLayer("127.0.0.1:0", nil, DeriveKey("k", "raft"), slog.New(slog.NewTextHandler(io.Discard, nil)), opt)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	other := &authStreamLayer{key: DeriveKey("nope", "raft")}
	if c, err := other.dialKind(l.Addr().String(), connBlob, 2*time.Second); err == nil {
		c.Close()
		t.Fatal("a peer without the cluster key opened a blob connection")
	}
	select {
	case k := <-served:
		t.Fatalf("the server was handed a connection of kind %q from a stranger", k)
	case <-time.After(200 * time.Millisecond):
	}
	c, err := l.dialKind(l.Addr().String(), connBlob, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	b, _ := io.ReadAll(c)
	if k := <-served; k != connBlob || string(b) != "ok" {
		t.Fatalf("kind %q, answer %q", k, b)
	}
}
