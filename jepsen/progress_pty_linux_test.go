//go:build linux

package jepsen_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// runOnTerminal runs cmd with its standard output and error on a new
// pseudo-terminal and returns what it wrote there.
func runOnTerminal(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("unlock the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Skipf("pseudo-terminal number: %v", err)
	}
	pts, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("open the pseudo-terminal: %v", err)
	}
	cmd.Stdout, cmd.Stderr = pts, pts
	cmd.Env = append(cmd.Env, "TERM=xterm")
	var out bytes.Buffer
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		io.Copy(&out, ptmx) // ends with EIO once the last writer closes
	}()
	err = cmd.Start()
	pts.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("%s: %v", cmd, err)
	}
	select {
	case <-copied:
	case <-time.After(10 * time.Second):
		t.Fatal("the pseudo-terminal's output did not end")
	}
	return out.String()
}
