//go:build unix

package cluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// LockLog takes the lock bbolt takes on the Raft log in dir (an exclusive
// flock on raft.db), waiting up to wait: ErrLogLocked when another process
// (a running node) holds it. While held, no node can open the log; release
// drops it. Without a log file there is nothing to lock.
func LockLog(dir string, wait time.Duration) (release func(), err error) {
	path := filepath.Join(dir, "raft.db")
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return func() {}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cluster: lock %s: %w", path, err)
	}
	deadline := time.Now().Add(wait)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() {
				syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
				f.Close()
			}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("cluster: lock %s: %w", path, err)
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("%w: %s", ErrLogLocked, path)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
