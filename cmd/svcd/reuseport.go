package main

import (
	"context"
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// listenHTTP listens on addr; with reusePort several processes (the
// children of `svcd cluster`) share one port and the kernel spreads
// connections across them.
func listenHTTP(addr string, reusePort bool) (net.Listener, error) {
	if !reusePort {
		return net.Listen("tcp", addr)
	}
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
		})
		if err != nil {
			return err
		}
		return serr
	}}
	return lc.Listen(context.Background(), "tcp", addr)
}
