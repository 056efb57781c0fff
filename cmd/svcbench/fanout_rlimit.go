//go:build unix

package main

import (
	"fmt"
	"syscall"
)

// raiseNoFile raises RLIMIT_NOFILE so that want descriptors fit: the soft
// limit up to the hard one, and the hard one too when allowed (root). It
// returns a description of the change ("" when none was needed).
func raiseNoFile(want uint64) (string, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return "", err
	}
	if lim.Cur >= want {
		return "", nil
	}
	old := lim
	if lim.Max < want {
		raised := syscall.Rlimit{Cur: want, Max: want}
		if syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised) == nil {
			return fmt.Sprintf("from %d (hard %d) to %d", old.Cur, old.Max, want), nil
		}
	}
	lim.Cur = min(want, lim.Max)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return "", err
	}
	if lim.Cur < want {
		return "", fmt.Errorf("hard limit %d is below the %d descriptors needed", lim.Max, want)
	}
	return fmt.Sprintf("from %d to %d", old.Cur, lim.Cur), nil
}
