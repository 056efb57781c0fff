package blobs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
)

// Dir is a directory of whole files that nodes copy between them over the
// same authenticated blob channel as the file store, under a space name:
// the database files a restore installs on every node (engine/backup).
// Unlike the file store, nothing here is collected: the files' owner
// decides what to keep.
type Dir struct {
	space, dir string
	peers      Peers
	log        *slog.Logger
}

// AddDir serves dir to the peers under space, and returns it.
func (r *Replicated) AddDir(space, dir string) *Dir {
	r.mu.Lock()
	if r.dirs == nil {
		r.dirs = map[string]string{}
	}
	r.dirs[space] = dir
	r.mu.Unlock()
	return &Dir{space: space, dir: dir, peers: r.peers, log: r.log}
}

// spaceDir is the directory served under space.
func (r *Replicated) spaceDir(space string) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	d, ok := r.dirs[space]
	return d, ok
}

// Push copies the file at path to every other member under name, and
// returns once a majority of the voters hold it (this node's copy counts
// when it votes: the caller has it at path, which must be in the
// directory). The copies to the others go on in the background.
// ErrNoMajority when too few were reached.
func (d *Dir) Push(ctx context.Context, name, path string) error {
	if !validKey.MatchString(name) {
		return errBadKey
	}
	others, selfVoter, err := d.peers.Members()
	if err != nil {
		return fmt.Errorf("blobs: cluster members: %w", err)
	}
	sum, size, err := sumFile(path)
	if err != nil {
		return err
	}
	have, voters := 0, 0
	if selfVoter {
		have, voters = 1, 1
	}
	for _, p := range others {
		if p.Voter {
			voters++
		}
	}
	need := voters/2 + 1
	if len(others) == 0 {
		return nil
	}
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), pushTimeout)
	type result struct {
		voter bool
		err   error
	}
	results := make(chan result, len(others))
	var wg sync.WaitGroup
	for _, p := range others {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, err := os.Open(path)
			if err == nil {
				err = pushSpace(pctx, d.peers, p.Addr, d.space, name, size, sum, f)
				f.Close()
			}
			if err != nil {
				d.log.Warn("blobs: copying a file to a peer failed", "space", d.space, "peer", p.Addr, "name", name, "err", err)
			}
			results <- result{p.Voter, err}
		}()
	}
	go func() { wg.Wait(); cancel() }()
	var errs []error
	for range others {
		if have >= need {
			break
		}
		select {
		case res := <-results:
			if res.err != nil {
				errs = append(errs, res.err)
			} else if res.voter {
				have++
			}
		case <-ctx.Done():
			errs = append(errs, ctx.Err())
		}
		if ctx.Err() != nil {
			break
		}
	}
	if have >= need {
		return nil
	}
	return fmt.Errorf("%w: %s reached %d of the %d voters it needs: %w", ErrNoMajority, name, have, need, errors.Join(errs...))
}

// Fetch copies name from the first peer that has it into dir (which may
// differ from the served directory only in tests), checking that its
// SHA-256 is want. fs.ErrNotExist when no peer has it.
func (d *Dir) Fetch(ctx context.Context, dir, name, want string) error {
	others, _, err := d.peers.Members()
	if err != nil {
		return err
	}
	var errs []error
	for _, voters := range []bool{true, false} {
		for _, p := range others {
			if p.Voter != voters {
				continue
			}
			err := fetchSpace(ctx, d.peers, p.Addr, d.space, dir, name, want)
			if err == nil {
				return nil
			}
			if !errors.Is(err, errPeerMissing) {
				errs = append(errs, fmt.Errorf("%s: %w", p.Addr, err))
			}
		}
	}
	if len(errs) == 0 {
		return fmt.Errorf("blobs: %s: no peer has it: %w", name, os.ErrNotExist)
	}
	return errors.Join(errs...)
}

// Path is where name is in the directory.
func (d *Dir) Path(name string) string { return filepath.Join(d.dir, name) }

// sumFile is the hex SHA-256 and the size of the file at path.
func sumFile(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}
