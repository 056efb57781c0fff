package blobs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
)

// Peer is another node as the local store reaches it.
type Peer struct {
	// Addr is where Dial reaches it (its Raft address).
	Addr  string
	Voter bool
}

// Peers is the cluster as the replicated local store needs it (the
// composition root adapts the Raft node).
type Peers interface {
	// Members lists the other nodes of the configuration, and whether
	// this node votes.
	Members() (others []Peer, selfVoter bool, err error)
	// Dial opens an authenticated connection of the blob kind to addr.
	Dial(ctx context.Context, addr string) (net.Conn, error)
}

// serve answers one peer connection (push or fetch) on the local store
// in dir, or the directory of the space the request names (dirs; nil:
// none).
func serve(dir string, dirs func(space string) (string, bool), c net.Conn) error {
	req, err := readMessage(c)
	if err != nil {
		return err
	}
	if req.Space != "" {
		d, ok := "", false
		if dirs != nil {
			d, ok = dirs(req.Space)
		}
		if !ok {
			return writeMessage(c, message{Error: "unknown space " + req.Space})
		}
		dir = d
	}
	switch req.Op {
	case "push":
		err := errors.New("blobs: a push without a checksum")
		if req.SHA256 != "" {
			err = receive(dir, req.Key, req.Size, idleConn{c}, req.SHA256, nil)
		}
		if err != nil {
			writeMessage(c, message{Error: err.Error()})
			return err
		}
		return writeMessage(c, message{OK: true})
	case "fetch":
		if !validKey.MatchString(req.Key) {
			return writeMessage(c, message{Error: errBadKey.Error()})
		}
		f, err := os.Open(filepath.Join(dir, req.Key))
		if errors.Is(err, fs.ErrNotExist) {
			return writeMessage(c, message{Missing: true})
		}
		if err != nil {
			return writeMessage(c, message{Error: err.Error()})
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return writeMessage(c, message{Error: err.Error()})
		}
		if err := writeMessage(c, message{OK: true, Size: st.Size()}); err != nil {
			return err
		}
		h := sha256.New()
		n, err := io.Copy(io.MultiWriter(idleConn{c}, h), io.LimitReader(f, st.Size()))
		if err != nil {
			return err
		}
		if n != st.Size() {
			return fmt.Errorf("blobs: %s shrank while sent", req.Key)
		}
		return writeMessage(c, message{SHA256: hex.EncodeToString(h.Sum(nil))})
	}
	return writeMessage(c, message{Error: "unknown op"})
}

// push sends the size bytes of r, whose SHA-256 is sum, to the peer at
// addr under key; nil once the peer has them on disk.
func push(ctx context.Context, peers Peers, addr, key string, size int64, sum string, r io.Reader) error {
	return pushSpace(ctx, peers, addr, "", key, size, sum, r)
}

// pushSpace is push into the peer's directory of space ("": its file
// store).
func pushSpace(ctx context.Context, peers Peers, addr, space, key string, size int64, sum string, r io.Reader) error {
	c, err := peers.Dial(ctx, addr)
	if err != nil {
		return err
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	if err := writeMessage(c, message{Op: "push", Key: key, Size: size, SHA256: sum, Space: space}); err != nil {
		return err
	}
	if _, err := io.Copy(idleConn{c}, io.LimitReader(r, size)); err != nil {
		return err
	}
	reply, err := readMessage(c)
	if err != nil {
		return err
	}
	if !reply.OK {
		return fmt.Errorf("blobs: peer %s refused %s: %s", addr, key, reply.Error)
	}
	return nil
}

// errPeerMissing is a peer without the fetched key.
var errPeerMissing = errors.New("blobs: the peer has no such blob")

// fetch copies key from the peer at addr into dir; want, when not empty,
// is the SHA-256 the bytes must have (the file's metadata).
func fetch(ctx context.Context, peers Peers, addr, dir, key, want string) error {
	return fetchSpace(ctx, peers, addr, "", dir, key, want)
}

// fetchSpace is fetch from the peer's directory of space ("": its file
// store).
func fetchSpace(ctx context.Context, peers Peers, addr, space, dir, key, want string) error {
	if !validKey.MatchString(key) {
		return errBadKey
	}
	c, err := peers.Dial(ctx, addr)
	if err != nil {
		return err
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	if err := writeMessage(c, message{Op: "fetch", Key: key, Space: space}); err != nil {
		return err
	}
	head, err := readMessage(c)
	if err != nil {
		return err
	}
	if head.Missing {
		return errPeerMissing
	}
	if !head.OK {
		return fmt.Errorf("blobs: peer %s: %s", addr, head.Error)
	}
	return receive(dir, key, head.Size, idleConn{c}, want, func(got string) error {
		tail, err := readMessage(c)
		if err != nil {
			return fmt.Errorf("blobs: fetch %s: %w", key, err)
		}
		if tail.SHA256 != got {
			return fmt.Errorf("blobs: fetch %s: checksum mismatch", key)
		}
		return nil
	})
}
