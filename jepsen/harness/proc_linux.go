//go:build linux

package harness

import "syscall"

// sysProcAttr makes the kernel SIGKILL the child if the test process dies
// without running its cleanups (a panic in another goroutine, go test's
// own timeout), so no svcd outlives the test binary.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
