//go:build unix

package loadtest

import (
	"cmp"
	"context"
	"net"
	"syscall"
)

// smallBufferDial dials with a 4 KiB receive buffer, set before connect so
// that the window advertised in the handshake matches it.
func smallBufferDial(ctx context.Context, network, addr string) (net.Conn, error) {
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		return cmp.Or(err, serr)
	}}
	return d.DialContext(ctx, network, addr)
}
