//go:build !unix

package loadtest

import (
	"context"
	"net"
)

// smallBufferDial dials with a 4 KiB receive buffer (set after connect).
func smallBufferDial(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, network, addr)
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetReadBuffer(4096)
	}
	return conn, err
}
