package web

import (
	"math"
	"net"
	"sync"
	"time"
)

// clientRate is a token bucket per client address: each client may start
// figureBurst renders at once and one more every figureEvery after that,
// so that one client fetching figures in a loop cannot take the CPU the
// live sessions need (hardening campaign: 8 parallel downloads of the
// largest figure dropped every live session from 54 to 12–16 frames/s).
// Downloads served from the figure cache cost nothing.
type clientRate struct {
	mu      sync.Mutex
	burst   float64
	every   time.Duration
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
}

const (
	figureBurst = 6
	figureEvery = 3 * time.Second
	// maxBuckets bounds the map: beyond it, buckets that have refilled
	// (their clients idle) are dropped.
	maxBuckets = 4096
)

func newClientRate(burst int, every time.Duration) *clientRate {
	return &clientRate{burst: float64(burst), every: every, buckets: map[string]*bucket{}}
}

// take spends one token of the client at remote (an address "host:port"
// or a bare host) and reports whether it had one; if not, wait is how long
// until it will.
func (c *clientRate) take(remote string, now time.Time) (ok bool, wait time.Duration) {
	host := remote
	if h, _, err := net.SplitHostPort(remote); err == nil {
		host = h
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.buckets[host]
	if b == nil {
		if len(c.buckets) >= maxBuckets {
			c.prune(now)
		}
		b = &bucket{tokens: c.burst, at: now}
		c.buckets[host] = b
	}
	b.tokens = math.Min(c.burst, b.tokens+now.Sub(b.at).Seconds()/c.every.Seconds())
	b.at = now
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	return false, time.Duration((1 - b.tokens) * float64(c.every))
}

// refund gives back the token of a render that drew nothing (a bad
// request found while drawing).
func (c *clientRate) refund(remote string) {
	host := remote
	if h, _, err := net.SplitHostPort(remote); err == nil {
		host = h
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if b := c.buckets[host]; b != nil {
		b.tokens = math.Min(c.burst, b.tokens+1)
	}
}

// prune drops the buckets of clients that would be full again by now.
func (c *clientRate) prune(now time.Time) {
	for h, b := range c.buckets {
		if b.tokens+now.Sub(b.at).Seconds()/c.every.Seconds() >= c.burst {
			delete(c.buckets, h)
		}
	}
}
