package blobs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Replicated is the local store of a node in a cluster: Put returns only
// once a majority of the voters hold the bytes on disk (this node's copy
// counts when it votes), and Open fetches a blob this node lacks from a
// peer. Delete and List stay local: every node collects its own copies
// (engine/files' collector), including those pushed for an upload that
// never committed. It satisfies engine/files.BlobStore with *Reader.
type Replicated struct {
	stores *Stores
	peers  Peers
	log    *slog.Logger

	mu       sync.Mutex
	inflight map[string]chan struct{} // keys being fetched
	// dirs are the other directories served (dir.go), by space.
	dirs map[string]string
}

// NewReplicated returns the replicated view of stores' local store.
func NewReplicated(stores *Stores, peers Peers, log *slog.Logger) *Replicated {
	if log == nil {
		log = slog.Default()
	}
	return &Replicated{stores: stores, peers: peers, log: log, inflight: map[string]chan struct{}{}}
}

func (r *Replicated) local(ctx context.Context) (*Bucket, error) { return r.stores.Store(ctx, "local") }

// Serve answers a peer's push or fetch on an authenticated connection.
func (r *Replicated) Serve(c net.Conn) {
	defer c.Close()
	if err := serve(r.stores.dir, r.spaceDir, c); err != nil {
		r.log.Warn("blobs: a peer's transfer failed", "remote", c.RemoteAddr().String(), "err", err)
	}
}

// countingHash counts and hashes what passes through it.
type countingHash struct {
	r io.Reader
	h hash.Hash
	n int64
}

func (c *countingHash) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.h.Write(p[:n])
	c.n += int64(n)
	return n, err
}

// ErrNoMajority is a Put whose bytes did not reach a majority of the
// voters: nothing is acknowledged, nothing is kept here.
var ErrNoMajority = errors.New("blobs: the bytes did not reach a majority of the voters")

// pushTimeout bounds a push that keeps making progress: generous, the
// idle timeout catches a stalled one.
const pushTimeout = time.Hour

// Put stores r under key here, then streams the stored file to the other
// voters and returns once a majority of the voters hold it. The pushes
// still running then go on in the background. When no majority is
// reached, the local copy is removed and the peers' copies, unreferenced,
// are collected after the grace period.
func (r *Replicated) Put(ctx context.Context, key, contentType string, src io.Reader) error {
	b, err := r.local(ctx)
	if err != nil {
		return err
	}
	ch := &countingHash{r: src, h: sha256.New()}
	if err := b.Put(ctx, key, contentType, ch); err != nil {
		return err
	}
	if validKey.MatchString(key) {
		// This node's copy counts toward the majority: on disk, not in
		// the page cache (fileblob does not fsync).
		if err := syncFile(r.stores.dir, key); err != nil {
			b.Delete(context.WithoutCancel(ctx), key)
			return fmt.Errorf("blobs: sync %s: %w", key, err)
		}
	}
	others, selfVoter, err := r.peers.Members()
	if err != nil {
		b.Delete(context.WithoutCancel(ctx), key)
		return fmt.Errorf("blobs: cluster members: %w", err)
	}
	var voters []Peer
	for _, p := range others {
		if p.Voter {
			voters = append(voters, p)
		}
	}
	have := 0
	if selfVoter {
		have = 1
	}
	need := (len(voters)+have)/2 + 1
	if have >= need {
		return nil
	}
	if !validKey.MatchString(key) {
		b.Delete(context.WithoutCancel(ctx), key)
		return errBadKey
	}
	sum := hex.EncodeToString(ch.h.Sum(nil))
	path := filepath.Join(r.stores.dir, key)
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), pushTimeout)
	results := make(chan error, len(voters))
	var wg sync.WaitGroup
	for _, p := range voters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, err := os.Open(path)
			if err == nil {
				err = push(pctx, r.peers, p.Addr, key, ch.n, sum, f)
				f.Close()
			}
			if err != nil {
				r.log.Warn("blobs: push to a peer failed", "peer", p.Addr, "key", key, "err", err)
			}
			results <- err
		}()
	}
	go func() { wg.Wait(); cancel() }()
	var errs []error
	for range voters {
		select {
		case err := <-results:
			if err == nil {
				have++
			} else {
				errs = append(errs, err)
			}
		case <-ctx.Done():
			errs = append(errs, ctx.Err())
		}
		if have >= need || ctx.Err() != nil {
			break
		}
	}
	if have >= need {
		return nil
	}
	b.Delete(context.WithoutCancel(ctx), key)
	return fmt.Errorf("%w: %s reached %d of the %d voters it needs: %w", ErrNoMajority, key, have, need, errors.Join(errs...))
}

// Open opens key, fetching it from a peer first when this node lacks it.
func (r *Replicated) Open(ctx context.Context, key string) (*Reader, error) {
	b, err := r.local(ctx)
	if err != nil {
		return nil, err
	}
	rd, err := b.Open(ctx, key)
	if !errors.Is(err, fs.ErrNotExist) || !validKey.MatchString(key) {
		return rd, err
	}
	if ferr := r.Fetch(ctx, key, ""); ferr != nil {
		if !errors.Is(ferr, fs.ErrNotExist) {
			r.log.Warn("blobs: fetch a missing blob from the peers", "key", key, "err", ferr)
		}
		return nil, err
	}
	return b.Open(ctx, key)
}

// Fetch copies key from the first peer that has it (voters first); want,
// when not empty, is the SHA-256 the bytes must have. Concurrent fetches
// of one key make one transfer. fs.ErrNotExist when no peer has it.
func (r *Replicated) Fetch(ctx context.Context, key, want string) error {
	for {
		r.mu.Lock()
		wait, busy := r.inflight[key]
		if !busy {
			done := make(chan struct{})
			r.inflight[key] = done
			r.mu.Unlock()
			err := r.fetchAny(ctx, key, want)
			r.mu.Lock()
			delete(r.inflight, key)
			r.mu.Unlock()
			close(done)
			return err
		}
		r.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return ctx.Err()
		}
		if _, err := os.Stat(filepath.Join(r.stores.dir, key)); err == nil {
			return nil
		}
	}
}

func (r *Replicated) fetchAny(ctx context.Context, key, want string) error {
	if _, err := r.local(ctx); err != nil {
		return err
	}
	others, _, err := r.peers.Members()
	if err != nil {
		return err
	}
	ordered := make([]Peer, 0, len(others))
	for _, voters := range []bool{true, false} {
		for _, p := range others {
			if p.Voter == voters {
				ordered = append(ordered, p)
			}
		}
	}
	var errs []error
	for _, p := range ordered {
		err := fetch(ctx, r.peers, p.Addr, r.stores.dir, key, want)
		if err == nil {
			return nil
		}
		if !errors.Is(err, errPeerMissing) {
			errs = append(errs, fmt.Errorf("%s: %w", p.Addr, err))
		}
	}
	if len(errs) == 0 {
		return fmt.Errorf("blobs: %s: no peer has it: %w", key, fs.ErrNotExist)
	}
	return errors.Join(errs...)
}

// Delete removes this node's copy of key.
func (r *Replicated) Delete(ctx context.Context, key string) error {
	b, err := r.local(ctx)
	if err != nil {
		return err
	}
	return b.Delete(ctx, key)
}

// List lists this node's copies.
func (r *Replicated) List(ctx context.Context, fn func(key string, modified time.Time) error) error {
	b, err := r.local(ctx)
	if err != nil {
		return err
	}
	return b.List(ctx, fn)
}

// Shared is false: every node holds its own copies.
func (r *Replicated) Shared() bool { return false }

// DownloadURL: clients never reach a node's local store directly.
func (r *Replicated) DownloadURL(context.Context, string, time.Duration) (string, error) {
	return "", errNoURL
}

// syncFile fsyncs key's file in dir and the directory.
func syncFile(dir, key string) error {
	f, err := os.Open(filepath.Join(dir, key))
	if err != nil {
		return err
	}
	err = f.Sync()
	f.Close()
	if err != nil {
		return err
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
