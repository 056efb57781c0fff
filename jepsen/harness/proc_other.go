//go:build !linux

package harness

import "syscall"

func sysProcAttr() *syscall.SysProcAttr { return nil }
