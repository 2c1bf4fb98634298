package web

import (
	"time"

	"dgpviz/internal/admit"
)

// clientRate limits figure renders per client (admit.ClientOf: an
// address, the loopback range, an IPv6 /64): each client may start
// figureBurst renders at once and one more every figureEvery after that,
// so that one client fetching figures in a loop cannot take the CPU the
// live sessions need (hardening campaign: 8 parallel downloads of the
// largest figure dropped every live session from 54 to 12–16 frames/s).
// Downloads served from the figure cache cost nothing.
type clientRate struct{ *admit.ClientRate }

const (
	figureBurst = 6
	figureEvery = 3 * time.Second
)

func newClientRate(burst int, every time.Duration) *clientRate {
	return &clientRate{admit.NewClientRate(burst, every)}
}

// take spends one token of the client at remote (an address "host:port"
// or a bare host) and reports whether it had one; if not, wait is how long
// until it will.
func (c *clientRate) take(remote string, now time.Time) (ok bool, wait time.Duration) {
	return c.Take(admit.ClientOf(remote), now)
}

// refund gives back the token of a render that drew nothing (a bad
// request found while drawing).
func (c *clientRate) refund(remote string) { c.Refund(admit.ClientOf(remote)) }
