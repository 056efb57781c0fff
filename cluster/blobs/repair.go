package blobs

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"svcd/internal/progress"
)

// Wanted lists the blobs the local store must hold, with their SHA-256
// (engine/files' metadata of the files kept by the local driver).
type Wanted func(ctx context.Context, fn func(key, sha256 string) error) error

// repairWorkers bounds the concurrent fetches of the background copy.
const repairWorkers = 4

// Repair runs the background copy until ctx ends: it walks wanted and
// fetches from the peers every blob this node lacks (a node that was
// down, is new, or restored a snapshot). ready says when the metadata can
// be read (the node is migrated). The first passes come quickly (1 s,
// 2 s, 4 s, ... after the start, while the node catches up with the log),
// then every interval.
func (r *Replicated) Repair(ctx context.Context, wanted Wanted, ready func() bool, interval time.Duration) {
	wait := time.Second
	for {
		if ready() {
			if _, err := r.RepairOnce(ctx, wanted); err != nil && ctx.Err() == nil {
				r.log.Warn("blobs: background copy", "err", err)
			}
			wait = min(2*wait, interval)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// RepairOnce fetches every wanted blob this node lacks, repairWorkers at
// a time; it answers how many it fetched. Blobs no peer has stay missing
// (reported as an error with the count).
func (r *Replicated) RepairOnce(ctx context.Context, wanted Wanted) (int, error) {
	type want struct{ key, sum string }
	var missing []want
	err := wanted(ctx, func(key, sum string) error {
		if !validKey.MatchString(key) {
			return nil
		}
		if _, err := os.Stat(filepath.Join(r.stores.dir, key)); errors.Is(err, fs.ErrNotExist) {
			missing = append(missing, want{key, sum})
		}
		return nil
	})
	if err != nil || len(missing) == 0 {
		return 0, err
	}
	rep := progress.Log(r.log, "files: background copy", progress.Options{Unit: "files", Total: int64(len(missing))})
	var fetched, failed atomic.Int64
	work := make(chan want)
	var wg sync.WaitGroup
	for range repairWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for w := range work {
				if err := r.Fetch(ctx, w.key, w.sum); err != nil {
					failed.Add(1)
					if ctx.Err() == nil {
						r.log.Warn("blobs: background copy of a blob", "key", w.key, "err", err)
					}
				} else {
					fetched.Add(1)
				}
				rep.Add(1)
			}
		}()
	}
feed:
	for _, w := range missing {
		select {
		case work <- w:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	var ferr error
	if n := failed.Load(); n > 0 {
		ferr = errors.New("blobs: some blobs could not be copied from any peer (next pass retries)")
	}
	if ctx.Err() != nil {
		ferr = ctx.Err()
	}
	rep.Finish(ferr)
	return int(fetched.Load()), ferr
}
