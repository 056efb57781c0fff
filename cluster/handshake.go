package cluster

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// The Raft transport authenticates every connection with a mutual
// challenge-response over a key derived from the cluster key: a node that
// does not hold the key cannot open a connection, so it can neither send
// nor receive log entries. (TLS with certificates, when configured, is the
// stronger option; this is the default.)

const (
	handshakeMagic   = "SVC1"
	handshakeNonce   = 32
	handshakeTimeout = 5 * time.Second
)

// ErrHandshake is a peer that failed to prove it holds the cluster key.
var ErrHandshake = errors.New("cluster: peer failed the cluster-key handshake")

// DeriveKey derives a purpose-specific key from the cluster key.
func DeriveKey(clusterKey, purpose string) []byte {
	m := hmac.New(sha256.New, []byte(clusterKey))
	m.Write([]byte("svc/" + purpose))
	return m.Sum(nil)
}

func proof(key []byte, role byte, a, b []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte{role})
	m.Write(a)
	m.Write(b)
	return m.Sum(nil)
}

func randomNonce() ([]byte, error) {
	n := make([]byte, handshakeNonce)
	_, err := rand.Read(n)
	return n, err
}

// clientHandshake proves the key to the server of c and checks the
// server's proof.
func clientHandshake(c net.Conn, key []byte) error {
	c.SetDeadline(time.Now().Add(handshakeTimeout))
	defer c.SetDeadline(time.Time{})
	nc, err := randomNonce()
	if err != nil {
		return err
	}
	if _, err := c.Write(append([]byte(handshakeMagic), nc...)); err != nil {
		return err
	}
	buf := make([]byte, handshakeNonce+sha256.Size)
	if _, err := io.ReadFull(c, buf); err != nil {
		return fmt.Errorf("%w: %v", ErrHandshake, err)
	}
	ns, sproof := buf[:handshakeNonce], buf[handshakeNonce:]
	if !hmac.Equal(sproof, proof(key, 'S', nc, ns)) {
		return ErrHandshake
	}
	_, err = c.Write(proof(key, 'C', ns, nc))
	return err
}

// serverHandshake checks the client's proof and proves the key back.
func serverHandshake(c net.Conn, key []byte) error {
	c.SetDeadline(time.Now().Add(handshakeTimeout))
	defer c.SetDeadline(time.Time{})
	hello := make([]byte, len(handshakeMagic)+handshakeNonce)
	if _, err := io.ReadFull(c, hello); err != nil {
		return fmt.Errorf("%w: %v", ErrHandshake, err)
	}
	if !bytes.Equal(hello[:len(handshakeMagic)], []byte(handshakeMagic)) {
		return ErrHandshake
	}
	nc := hello[len(handshakeMagic):]
	ns, err := randomNonce()
	if err != nil {
		return err
	}
	if _, err := c.Write(append(ns, proof(key, 'S', nc, ns)...)); err != nil {
		return err
	}
	cproof := make([]byte, sha256.Size)
	if _, err := io.ReadFull(c, cproof); err != nil {
		return fmt.Errorf("%w: %v", ErrHandshake, err)
	}
	if !hmac.Equal(cproof, proof(key, 'C', ns, nc)) {
		return ErrHandshake
	}
	return nil
}
