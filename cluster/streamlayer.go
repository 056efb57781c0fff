package cluster

import (
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"time"

	"github.com/hashicorp/raft"
)

// authStreamLayer is a raft.StreamLayer over TCP whose connections pass the
// cluster-key handshake in both directions.
type authStreamLayer struct {
	ln        net.Listener
	advertise net.Addr
	key       []byte
	log       *slog.Logger
	accepted  chan net.Conn
	done      chan struct{}
	streamOptions
}

// streamOptions are fixed before the listener opens: the accept loop reads
// them from its first connection on, so they are never assigned later.
type streamOptions struct {
	// rpc serves the node's own requests (forwarded commands, joins,
	// read indexes) that share the port with Raft.
	rpc func(kind byte, c net.Conn)
	// With TLS, connections are wrapped before the handshake.
	tlsServer, tlsClient *tls.Config
}

// Connection kinds, the first byte after the handshake.
const (
	connRaft    byte = 'R'
	connForward byte = 'F'
	connJoin    byte = 'J'
	connIndex   byte = 'I'
	connStatus  byte = 'S'
	// connMember carries a membership change (add or remove a server)
	// and connTransfer a leadership transfer, forwarded to the leader
	// (membership_forward.go).
	connMember   byte = 'M'
	connTransfer byte = 'T'
	// connBlob carries the bytes of uploaded files between nodes (push
	// and fetch, cluster/blobs): the handler of Config.BlobServer owns
	// the connection.
	connBlob byte = 'B'
)

var _ raft.StreamLayer = (*authStreamLayer)(nil)

func newAuthStreamLayer(bind string, advertise net.Addr, key []byte, log *slog.Logger, opt streamOptions) (*authStreamLayer, error) {
	ln, err := net.Listen("tcp", bind)
	if err != nil {
		return nil, err
	}
	if advertise == nil {
		advertise = ln.Addr()
	}
	l := &authStreamLayer{ln: ln, advertise: advertise, key: key, log: log,
		accepted: make(chan net.Conn), done: make(chan struct{}), streamOptions: opt}
	go l.acceptLoop()
	return l, nil
}

// acceptLoop runs each handshake in its own goroutine so one slow or
// hostile peer cannot hold up the others.
func (l *authStreamLayer) acceptLoop() {
	for {
		c, err := l.ln.Accept()
		if err != nil {
			close(l.done)
			return
		}
		go func() {
			if l.tlsServer != nil {
				tc := tls.Server(c, l.tlsServer)
				c.SetDeadline(time.Now().Add(handshakeTimeout))
				if err := tc.Handshake(); err != nil {
					l.log.Warn("refused a Raft connection: TLS", "remote", c.RemoteAddr().String(), "err", err)
					c.Close()
					return
				}
				c.SetDeadline(time.Time{})
				c = tc
			}
			if err := serverHandshake(c, l.key); err != nil {
				l.log.Warn("refused a Raft connection without the cluster key", "remote", c.RemoteAddr().String(), "err", err)
				c.Close()
				return
			}
			var kind [1]byte
			c.SetReadDeadline(time.Now().Add(handshakeTimeout))
			if _, err := c.Read(kind[:]); err != nil {
				c.Close()
				return
			}
			c.SetReadDeadline(time.Time{})
			if kind[0] != connRaft {
				if l.rpc == nil {
					c.Close()
					return
				}
				l.rpc(kind[0], c)
				return
			}
			select {
			case l.accepted <- c:
			case <-l.done:
				c.Close()
			}
		}()
	}
}

func (l *authStreamLayer) Accept() (net.Conn, error) {
	select {
	case c := <-l.accepted:
		return c, nil
	case <-l.done:
		return nil, errors.New("cluster: raft listener closed")
	}
}

func (l *authStreamLayer) Close() error { return l.ln.Close() }

func (l *authStreamLayer) Addr() net.Addr { return l.advertise }

func (l *authStreamLayer) Dial(addr raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	return l.dialKind(string(addr), connRaft, timeout)
}

// dialKind opens an authenticated connection of the given kind.
func (l *authStreamLayer) dialKind(addr string, kind byte, timeout time.Duration) (net.Conn, error) {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	if l.tlsClient != nil {
		c.SetDeadline(time.Now().Add(timeout))
		tc, err := clientTLS(c, l.tlsClient, addr)
		if err != nil {
			c.Close()
			return nil, err
		}
		c.SetDeadline(time.Time{})
		c = tc
	}
	if err := clientHandshake(c, l.key); err != nil {
		c.Close()
		return nil, err
	}
	if _, err := c.Write([]byte{kind}); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}
