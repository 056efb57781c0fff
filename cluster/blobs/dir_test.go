package blobs

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"
)

// TestDirPushAndFetch: a directory served under a space takes pushes and
// answers fetches in that directory, not in the file store; a peer that
// does not serve the space refuses; Push returns once a majority of the
// voters hold the file and fails without one.
func TestDirPushAndFetch(t *testing.T) {
	ctx := context.Background()
	a := startPeer(t, &loopPeers{})
	aDir := t.TempDir()
	a.repl.AddDir("restores", aDir)
	b := startPeer(t, &loopPeers{}) // serves no such space
	selfDir := t.TempDir()
	self := startPeer(t, &loopPeers{selfVoter: true, others: []Peer{{Addr: a.addr, Voter: true}}})
	d := self.repl.AddDir("restores", selfDir)
	body := bytes.Repeat([]byte("SQLite format 3\x00"), 4096)
	name := sum(body) + ".db"
	path := filepath.Join(selfDir, name)
	if err := os.WriteFile(path, body, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := d.Push(ctx, name, path); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(aDir, name)); err != nil || !bytes.Equal(got, body) {
		t.Fatalf("the peer's directory: %d bytes, %v", len(got), err)
	}
	if fs := files(t, a.dir); len(fs) != 0 {
		t.Fatalf("the push went to the file store too: %v", fs)
	}
	// Fetch: from the peer's directory, checked against the digest.
	dst := t.TempDir()
	if err := d.Fetch(ctx, dst, name, sum([]byte("other"))); err == nil {
		t.Fatal("a fetch with the wrong digest succeeded")
	}
	if err := d.Fetch(ctx, dst, name, sum(body)); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dst, name)); !bytes.Equal(got, body) {
		t.Fatalf("fetched %d bytes", len(got))
	}
	if err := d.Fetch(ctx, dst, sum([]byte("none"))+".db", ""); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a fetch no peer can answer: %v", err)
	}
	// A peer without the space refuses the push.
	if err := pushSpace(ctx, &loopPeers{}, b.addr, "restores", name, int64(len(body)), sum(body), bytes.NewReader(body)); err == nil {
		t.Fatal("a peer without the space took a push")
	}
	// Without a majority (two voters down of three), Push fails.
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead.Close()
	lone := startPeer(t, &loopPeers{selfVoter: true, others: []Peer{{Addr: dead.Addr().String(), Voter: true}, {Addr: b.addr, Voter: true}}})
	ld := lone.repl.AddDir("restores", t.TempDir())
	if err := ld.Push(ctx, name, path); !errors.Is(err, ErrNoMajority) {
		t.Fatalf("push without a majority: %v", err)
	}
}
