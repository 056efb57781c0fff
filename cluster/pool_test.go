package cluster

import (
	"crypto/tls"
	"io"
	"net"
	"testing"
	"time"
)

// pair returns both ends of a loopback TCP connection.
func pair(t *testing.T, ln net.Listener) (client, server net.Conn) {
	t.Helper()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server = <-accepted
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

// TestPoolSkipsConnectionsThePeerClosed: a pooled forwarding connection
// the leader closed (a restart, its idle timeout) is not handed out, so a
// forwarded write is never sent on it and answered as indeterminate; an
// open one is reused and still carries data, also under TLS (the liveness
// probe's timed-out read leaves the TLS state intact).
func TestPoolSkipsConnectionsThePeerClosed(t *testing.T) {
	dir := t.TempDir()
	serverCfg, clientCfg, err := writeCA(t, dir, "pool").tlsConfigs()
	if err != nil {
		t.Fatal(err)
	}
	clientCfg = clientCfg.Clone()
	clientCfg.ServerName = "127.0.0.1"
	for _, useTLS := range []bool{false, true} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		addr := ln.Addr().String()
		open := func() (net.Conn, net.Conn) {
			c, s := pair(t, ln)
			if !useTLS {
				return c, s
			}
			tc, ts := tls.Client(c, clientCfg), tls.Server(s, serverCfg)
			errs := make(chan error, 1)
			go func() { errs <- ts.Handshake() }()
			if err := tc.Handshake(); err != nil {
				t.Fatal(err)
			}
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
			return tc, ts
		}
		var p connPool
		dials := 0
		dial := func() (net.Conn, error) { dials++; c, _ := open(); return c, nil }

		alive, aliveServer := open()
		p.put(addr, alive)
		got, err := p.get(addr, connForward, dial)
		if err != nil || got != alive || dials != 0 {
			t.Fatalf("tls=%v: an open pooled connection was not reused (dials %d, %v)", useTLS, dials, err)
		}
		go got.Write([]byte("ping"))
		buf := make([]byte, 4)
		aliveServer.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.ReadFull(aliveServer, buf); err != nil || string(buf) != "ping" {
			t.Fatalf("tls=%v: the reused connection does not carry data after the probe: %q %v", useTLS, buf, err)
		}

		closed, closedServer := open()
		p.put(addr, closed)
		closedServer.Close()
		time.Sleep(50 * time.Millisecond) // the FIN (or close_notify) arrives
		got, err = p.get(addr, connForward, dial)
		if err != nil || got == closed || dials != 1 {
			t.Fatalf("tls=%v: a connection the peer closed was handed out (dials %d, %v)", useTLS, dials, err)
		}
	}
}
