package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// moveAside moves the entries rel (paths relative to dataDir, such as
// "data.db" or "raft/snapshots") that exist into a new directory
// dataDir/repair-<UTC time>-<what>/, under the same relative paths, and
// returns it with what it moved. Nothing is deleted: moving an entry back
// undoes the repair, and deleting the directory frees its space.
func moveAside(dataDir, what string, rel []string) (aside string, moved []string, err error) {
	stamp := time.Now().UTC().Format("20060102T150405Z")
	aside = filepath.Join(dataDir, fmt.Sprintf("repair-%s-%s", stamp, what))
	for i := 2; ; i++ {
		err := os.Mkdir(aside, 0o700)
		if err == nil {
			break
		}
		if !errors.Is(err, os.ErrExist) {
			return "", nil, fmt.Errorf("repair: %w", err)
		}
		aside = filepath.Join(dataDir, fmt.Sprintf("repair-%s-%s-%d", stamp, what, i))
	}
	for _, r := range rel {
		src := filepath.Join(dataDir, r)
		if _, err := os.Lstat(src); errors.Is(err, os.ErrNotExist) {
			continue
		}
		dst := filepath.Join(aside, r)
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			return aside, moved, fmt.Errorf("repair: %w", err)
		}
		if err := os.Rename(src, dst); err != nil {
			return aside, moved, fmt.Errorf("repair: move %s aside: %w", src, err)
		}
		moved = append(moved, r)
		syncDir(filepath.Dir(src))
		syncDir(filepath.Dir(dst))
	}
	syncDir(aside)
	if len(moved) == 0 {
		os.Remove(aside)
		return "", nil, nil
	}
	return aside, moved, nil
}

// syncDir makes the renames in dir durable.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
