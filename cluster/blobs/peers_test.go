package blobs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// The peer protocol over real loopback TCP. The cluster-key handshake in
// front of it is cluster's (TestBlobConnNeedsTheClusterKey); here a
// connection is the one a node's blob server is handed after it.

// peerNode is a node's local store serving peers on a loopback listener.
type peerNode struct {
	dir    string
	addr   string
	stores *Stores
	repl   *Replicated
}

// loopPeers dials peers over loopback TCP; others is the rest of the
// configuration as the node sees it.
type loopPeers struct {
	others    []Peer
	selfVoter bool
}

func (p *loopPeers) Members() ([]Peer, bool, error) { return p.others, p.selfVoter, nil }
func (p *loopPeers) Dial(ctx context.Context, addr string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, "tcp", addr)
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func startPeer(t *testing.T, peers *loopPeers) *peerNode {
	t.Helper()
	dir := t.TempDir()
	stores := New(dir, func(string) string { return "" })
	t.Cleanup(func() { stores.Close() })
	n := &peerNode{dir: dir, stores: stores, repl: NewReplicated(stores, peers, quiet)}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	n.addr = ln.Addr().String()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go n.repl.Serve(c)
		}
	}()
	return n
}

// files lists what dir holds (temporary files included).
func files(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

func sum(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// waitEmpty waits until the server side is done with a refused transfer.
func waitEmpty(t *testing.T, dir string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for len(files(t, dir)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("a refused transfer left %v", files(t, dir))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestPushRefusesBadBytes: a push whose checksum does not match, one cut
// short, and one under a name that is not a stored name are refused, and
// the receiver keeps nothing, not even a temporary file.
func TestPushRefusesBadBytes(t *testing.T) {
	ctx := context.Background()
	srv := startPeer(t, &loopPeers{})
	cli := &loopPeers{}
	body := bytes.Repeat([]byte("abcdefgh"), 64<<10) // 512 KiB
	key := "0b8a43c5-7d4e-4b0e-9a53-2d1d1f0c3e11.bin"

	err := push(ctx, cli, srv.addr, key, int64(len(body)), sum([]byte("other")), bytes.NewReader(body))
	if err == nil || !strings.Contains(err.Error(), "checksum") {
		t.Errorf("mismatching checksum: %v", err)
	}
	waitEmpty(t, srv.dir)

	// Truncated: the header promises more than the sender delivers.
	c, err := cli.Dial(ctx, srv.addr)
	if err != nil {
		t.Fatal(err)
	}
	writeMessage(c, message{Op: "push", Key: key, Size: int64(len(body)), SHA256: sum(body)})
	c.Write(body[:len(body)/2])
	c.(*net.TCPConn).CloseWrite()
	reply, _ := readMessage(c)
	c.Close()
	if reply.OK {
		t.Error("a truncated push was acknowledged")
	}
	waitEmpty(t, srv.dir)

	if err := push(ctx, cli, srv.addr, key, 3, "", strings.NewReader("abc")); err == nil {
		t.Error("a push without a checksum was accepted")
	}
	waitEmpty(t, srv.dir)

	for _, bad := range []string{"../escape.bin", "x.bin.0011.tmp", ".hidden", "a/b.bin"} {
		if err := push(ctx, cli, srv.addr, bad, 3, sum([]byte("abc")), strings.NewReader("abc")); err == nil {
			t.Errorf("push under %q accepted", bad)
		}
	}
	waitEmpty(t, srv.dir)
	if _, err := os.Stat(filepath.Join(filepath.Dir(srv.dir), "escape.bin")); err == nil {
		t.Error("a push wrote outside the store")
	}

	if err := push(ctx, cli, srv.addr, key, int64(len(body)), sum(body), bytes.NewReader(body)); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(srv.dir, key))
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("pushed blob: %d bytes, %v", len(got), err)
	}
	if fs := files(t, srv.dir); len(fs) != 1 {
		t.Errorf("the store holds %v", fs)
	}
}

// TestFetch: a fetch copies a peer's blob and checks it against the
// metadata's checksum when one is given; a wrong one keeps nothing; a
// peer without the blob says so.
func TestFetch(t *testing.T) {
	ctx := context.Background()
	srv := startPeer(t, &loopPeers{})
	cli := &loopPeers{}
	body := bytes.Repeat([]byte("0123456789"), 10000)
	key := "5f1c2b7a-0d1e-4f6a-8b9c-0a1b2c3d4e5f.png"
	if err := os.WriteFile(filepath.Join(srv.dir, key), body, 0o600); err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	if err := fetch(ctx, cli, srv.addr, dst, key, sum([]byte("not it"))); err == nil {
		t.Error("a fetch with the wrong checksum succeeded")
	}
	if fs := files(t, dst); len(fs) != 0 {
		t.Errorf("a refused fetch left %v", fs)
	}
	if err := fetch(ctx, cli, srv.addr, dst, key, sum(body)); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dst, key)); !bytes.Equal(got, body) {
		t.Errorf("fetched %d bytes", len(got))
	}
	if err := fetch(ctx, cli, srv.addr, dst, "5f1c2b7a-0d1e-4f6a-8b9c-000000000000.png", ""); !errors.Is(err, errPeerMissing) {
		t.Errorf("fetch of a missing blob: %v", err)
	}
}

// TestReplicatedPutWaitsForAMajority: with three voters, a Put succeeds
// once one peer holds the bytes (two of three), fails when no peer takes
// them, and then leaves nothing here; Open fetches a blob this node lacks.
func TestReplicatedPutWaitsForAMajority(t *testing.T) {
	ctx := context.Background()
	a := startPeer(t, &loopPeers{})
	// A voter that is down: its address refuses connections.
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead.Close()
	self := startPeer(t, &loopPeers{selfVoter: true, others: []Peer{{Addr: a.addr, Voter: true}, {Addr: dead.Addr().String(), Voter: true}}})
	body := bytes.Repeat([]byte("x"), 3<<20)
	key := "11111111-2222-4333-8444-555555555555.bin"
	if err := self.repl.Put(ctx, key, "application/octet-stream", bytes.NewReader(body)); err != nil {
		t.Fatal(err)
	}
	for _, n := range []*peerNode{self, a} {
		if got, _ := os.ReadFile(filepath.Join(n.dir, key)); !bytes.Equal(got, body) {
			t.Errorf("%s holds %d bytes", n.dir, len(got))
		}
	}

	lonely := startPeer(t, &loopPeers{selfVoter: true, others: []Peer{{Addr: dead.Addr().String(), Voter: true}, {Addr: dead.Addr().String(), Voter: true}}})
	if err := lonely.repl.Put(ctx, key, "application/octet-stream", bytes.NewReader(body)); !errors.Is(err, ErrNoMajority) {
		t.Fatalf("a Put no peer took: %v", err)
	}
	if fs := files(t, lonely.dir); len(fs) != 0 {
		t.Errorf("a failed Put left %v", fs)
	}

	// A node that lacks the blob fetches it on Open.
	late := startPeer(t, &loopPeers{selfVoter: true, others: []Peer{{Addr: dead.Addr().String(), Voter: true}, {Addr: a.addr, Voter: true}}})
	r, err := late.repl.Open(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(r)
	r.Close()
	if !bytes.Equal(got, body) {
		t.Errorf("opened %d bytes", len(got))
	}
	if _, err := late.repl.Open(ctx, "11111111-2222-4333-8444-000000000000.bin"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a blob nobody has: %v", err)
	}
}

// TestRepairOnceCopiesWhatIsMissing: the background copy fetches every
// wanted blob this node lacks, checked against the wanted checksum, and
// leaves the others alone.
func TestRepairOnceCopiesWhatIsMissing(t *testing.T) {
	ctx := context.Background()
	src := startPeer(t, &loopPeers{})
	want := map[string][]byte{}
	for i, k := range []string{"aaaaaaaa-0000-4000-8000-000000000001.txt", "aaaaaaaa-0000-4000-8000-000000000002.txt", "aaaaaaaa-0000-4000-8000-000000000003.txt"} {
		want[k] = bytes.Repeat([]byte{byte('a' + i)}, 1000*(i+1))
		os.WriteFile(filepath.Join(src.dir, k), want[k], 0o600)
	}
	late := startPeer(t, &loopPeers{selfVoter: true, others: []Peer{{Addr: src.addr, Voter: true}}})
	os.MkdirAll(late.dir, 0o700)
	have := "aaaaaaaa-0000-4000-8000-000000000001.txt"
	os.WriteFile(filepath.Join(late.dir, have), want[have], 0o600)
	wanted := func(ctx context.Context, fn func(key, sha string) error) error {
		for k, b := range want {
			if err := fn(k, sum(b)); err != nil {
				return err
			}
		}
		return nil
	}
	n, err := late.repl.RepairOnce(ctx, wanted)
	if err != nil || n != 2 {
		t.Fatalf("fetched %d, %v", n, err)
	}
	for k, b := range want {
		if got, _ := os.ReadFile(filepath.Join(late.dir, k)); !bytes.Equal(got, b) {
			t.Errorf("%s: %d bytes", k, len(got))
		}
	}
	if n, err := late.repl.RepairOnce(ctx, wanted); n != 0 || err != nil {
		t.Errorf("a second pass fetched %d, %v", n, err)
	}
}

// patternReader yields n bytes without holding them.
type patternReader struct{ n, off int64 }

func (r *patternReader) Read(p []byte) (int, error) {
	if r.off >= r.n {
		return 0, io.EOF
	}
	k := min(int64(len(p)), r.n-r.off)
	for i := range p[:k] {
		p[i] = byte((r.off + int64(i)) % 251)
	}
	r.off += k
	return int(k), nil
}

// TestReplicatedPutStreams: a 64 MiB Put to this node and a peer, and the
// peer's fetch back, allocate a small fraction of the size on both sides
// (both run in this process): the bytes stream, nothing buffers a file.
func TestReplicatedPutStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 192 MiB to disk")
	}
	ctx := context.Background()
	peer := startPeer(t, &loopPeers{})
	self := startPeer(t, &loopPeers{selfVoter: true, others: []Peer{{Addr: peer.addr, Voter: true}}})
	const size = 64 << 20
	key := "22222222-3333-4444-8555-666666666666.bin"
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if err := self.repl.Put(ctx, key, "application/octet-stream", &patternReader{n: size}); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(self.dir, key)); err != nil {
		t.Fatal(err)
	}
	if err := self.repl.Fetch(ctx, key, ""); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("allocated %d bytes for a %d-byte push and fetch", alloc, size)
	if alloc > size/8 {
		t.Errorf("a %d-byte push and fetch allocated %d bytes", size, alloc)
	}
	st, err := os.Stat(filepath.Join(self.dir, key))
	if err != nil || st.Size() != size {
		t.Fatalf("fetched back: %v %v", st, err)
	}
}
