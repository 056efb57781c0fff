//go:build !linux

package jepsen_test

import (
	"os/exec"
	"testing"
)

// runOnTerminal needs Linux's pseudo-terminals.
func runOnTerminal(t *testing.T, _ *exec.Cmd) string {
	t.Skip("pseudo-terminals are opened the Linux way only")
	return ""
}
