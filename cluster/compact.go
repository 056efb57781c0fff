package cluster

import (
	"fmt"
	"os"
	"time"

	"go.etcd.io/bbolt"
)

// The Raft log lives in a bbolt file, which never shrinks: entries that
// snapshots made obsolete are deleted, but their pages only go to the
// freelist. When most of the file is free, it is rewritten at start (the
// node is not running yet) into a compact copy, swapped in atomically.

// compactMinSize is the file size below which compaction is not worth it.
const compactMinSize = 64 << 20

// compactLog rewrites path when at least half of it is free space. It
// reports whether it did.
func compactLog(path string, minSize int64) (bool, error) {
	fi, err := os.Stat(path)
	if err != nil || fi.Size() < minSize {
		return false, nil
	}
	// Read-write: bbolt loads the freelist (which tells the free space) only
	// then. The node is not running yet, so nothing else holds the file.
	src, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: 2 * time.Second})
	if err != nil {
		return false, err
	}
	var used int64
	err = src.View(func(tx *bbolt.Tx) error {
		used = int64(tx.Size()) - int64(src.Stats().FreePageN+src.Stats().PendingPageN)*int64(src.Info().PageSize)
		return nil
	})
	if err != nil || used*2 > fi.Size() {
		src.Close()
		return false, err
	}
	tmp := path + ".compact"
	os.Remove(tmp)
	dst, err := bbolt.Open(tmp, 0o600, &bbolt.Options{Timeout: 2 * time.Second})
	if err != nil {
		src.Close()
		return false, err
	}
	err = src.View(func(stx *bbolt.Tx) error {
		return dst.Update(func(dtx *bbolt.Tx) error {
			return stx.ForEach(func(name []byte, b *bbolt.Bucket) error {
				nb, err := dtx.CreateBucketIfNotExists(name)
				if err != nil {
					return err
				}
				nb.FillPercent = 1.0 // keys are appended in order
				return b.ForEach(func(k, v []byte) error {
					if v == nil {
						return fmt.Errorf("nested bucket %q in the Raft log", k)
					}
					return nb.Put(k, v)
				})
			})
		})
	})
	src.Close()
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return false, fmt.Errorf("compact raft log: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return false, err
	}
	return true, nil
}
