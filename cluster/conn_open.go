//go:build unix

package cluster

import (
	"errors"
	"net"
	"syscall"
)

// stillOpen reports whether an idle pooled connection can carry a request:
// the peer has not closed it (a restarted leader, an idle timeout) and has
// sent nothing unasked (for TLS, a close_notify). Without this check a
// write forwarded on a connection the old leader closed fails after it is
// sent, and must then be answered as indeterminate; checked here, the
// write goes on a fresh connection instead. It peeks at the socket
// without blocking: a read deadline in the past would not do, since Go
// reports the timeout without reading.
func stillOpen(c net.Conn) bool {
	if tc, ok := c.(interface{ NetConn() net.Conn }); ok {
		c = tc.NetConn()
	}
	sc, ok := c.(syscall.Conn)
	if !ok {
		return true // cannot tell: the forward path copes as before
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	open := false
	err = rc.Read(func(fd uintptr) bool {
		var b [1]byte
		_, _, rerr := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		// Quiet and open: nothing to read yet. EOF (n == 0), an error, or
		// bytes nobody asked for: not reusable.
		open = errors.Is(rerr, syscall.EAGAIN) || errors.Is(rerr, syscall.EWOULDBLOCK)
		return true // never wait for readiness
	})
	return err == nil && open
}
