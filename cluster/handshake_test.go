package cluster

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

func TestHandshake(t *testing.T) {
	good := DeriveKey("cluster-secret", "raft")
	bad := DeriveKey("other-secret", "raft")
	cases := []struct {
		name             string
		client, server   []byte
		wantClient, want bool
	}{
		{"same key", good, good, true, true},
		{"client without the key", bad, good, false, false},
		{"server without the key", good, bad, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, b := net.Pipe()
			srv := make(chan error, 1)
			go func() { srv <- serverHandshake(b, c.server) }()
			cerr := clientHandshake(a, c.client)
			a.Close()
			serr := <-srv
			if (cerr == nil) != c.wantClient || (serr == nil) != c.want {
				t.Fatalf("client err %v, server err %v", cerr, serr)
			}
		})
	}
}

func TestStreamLayerRefusesStrangers(t *testing.T) {
	key := DeriveKey("k", "raft")
	l, err := newAuthStreamLayer("127.0.0.1:0", nil, key, slog.New(slog.NewTextHandler(io.Discard, nil)), streamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	accepted := make(chan net.Conn, 2)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	// A plain TCP client that speaks no handshake is dropped.
	raw, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	raw.Write([]byte("GET / HTTP/1.1\r\nHost: raft.example\r\nUser-Agent: stranger\r\n\r\n"))
	raw.SetReadDeadline(time.Now().Add(6 * time.Second))
	if _, err := io.ReadAll(raw); err != nil && !errors.Is(err, io.EOF) {
		t.Logf("stranger read: %v", err)
	}
	raw.Close()
	// A peer with another key is refused by Dial's handshake.
	other := &authStreamLayer{key: DeriveKey("nope", "raft")}
	if c, err := other.Dial(raft.ServerAddress(l.Addr().String()), time.Second); err == nil {
		c.Close()
		t.Fatal("a peer with the wrong key connected")
	}
	// A peer with the key gets through.
	friend := &authStreamLayer{key: key}
	c, err := friend.Dial(raft.ServerAddress(l.Addr().String()), time.Second)
	if err != nil {
		t.Fatalf("dial with the key: %v", err)
	}
	defer c.Close()
	select {
	case s := <-accepted:
		s.Close()
	case <-time.After(2 * time.Second):
		t.Fatal("the authenticated connection was not accepted")
	}
	if len(accepted) != 0 {
		t.Fatal("a connection without the key was accepted")
	}
}
