package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"svcd/cluster"
)

// checkStopped refuses a repair while a node runs on dataDir: a node
// answers on the admin socket in its data directory (as `svcd admin
// create` finds it) and holds the lock of its Raft log.
func checkStopped(dataDir string) error {
	if fi, err := os.Stat(dataDir); err != nil || !fi.IsDir() {
		return fmt.Errorf("repair: %s is not a data directory", dataDir)
	}
	sock := filepath.Join(dataDir, adminSocketName)
	if c, err := net.DialTimeout("unix", sock, time.Second); err == nil {
		c.Close()
		return fmt.Errorf("repair: a node is running on %s (it answers on %s): stop it first", dataDir, sock)
	}
	release, err := lockDataDir(dataDir)
	if err != nil {
		return err
	}
	release()
	return nil
}

// lockDataDir takes the lock of dataDir's Raft log, so that no node starts
// while a repair moves files.
func lockDataDir(dataDir string) (release func(), err error) {
	release, err = cluster.LockLog(filepath.Join(dataDir, "raft"), 0)
	if errors.Is(err, cluster.ErrLogLocked) {
		return nil, fmt.Errorf("repair: a node is running on %s (it holds the lock of raft/raft.db): stop it first", dataDir)
	}
	return release, err
}
