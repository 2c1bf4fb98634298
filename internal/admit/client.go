package admit

import (
	"context"
	"math"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"
)

// Who a client is, for every per-client limit (sessions, the pool's share,
// parked uploads and forks, figure downloads, open connections): one
// person, as far as an address tells. The loopback range is one client
// (127.0.0.2 is the same machine as 127.0.0.1), an IPv6 address counts by
// its /64 (the prefix one host or one home is given; a host picks any
// address in it at will), an IPv4 address as it is.

// loopbackClient is the client every loopback address counts as.
const loopbackClient = "loopback"

// ClientOf returns the client that remote (an address "host:port" or a
// bare host, as http.Request.RemoteAddr) counts as: "loopback" for the
// loopback range, an IPv6 address's /64 prefix, an IPv4 address as it is,
// and anything that does not parse as it is.
func ClientOf(remote string) string {
	host := remote
	if h, _, err := net.SplitHostPort(remote); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if i := strings.IndexByte(host, '%'); i >= 0 { // a zone: fe80::1%eth0
		host = host[:i]
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	a = a.Unmap() // ::ffff:192.0.2.1 is 192.0.2.1
	switch {
	case a.IsLoopback():
		return loopbackClient
	case a.Is6():
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}

// RequestClient returns the client of r: ClientOf its remote address; or,
// with trustProxy, when the request comes from loopback (a reverse proxy
// on this machine), ClientOf the last address its X-Forwarded-For header
// names (the one the proxy saw).
func RequestClient(r *http.Request, trustProxy bool) string {
	c := ClientOf(r.RemoteAddr)
	if !trustProxy || c != loopbackClient {
		return c
	}
	xff := r.Header.Values("X-Forwarded-For")
	if len(xff) == 0 {
		return c
	}
	last := xff[len(xff)-1]
	if i := strings.LastIndexByte(last, ','); i >= 0 {
		last = last[i+1:]
	}
	if last = strings.TrimSpace(last); last == "" {
		return c
	}
	return ClientOf(last)
}

// ClientRate is a token bucket per client: each client may do Burst
// things at once and one more every Every after that.
type ClientRate struct {
	mu      sync.Mutex
	burst   float64
	every   time.Duration
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
}

// maxBuckets bounds a ClientRate's map: beyond it, the buckets of idle
// clients (full again) are dropped.
const maxBuckets = 4096

// Commands. Every command a page sends its optimizer costs a publication
// and a frame, and an edit an evaluation of the model: a client that sends
// them back to back (the hardening campaign's add-data attack,
// docs/measurements.md) takes the optimizers' cores from everyone else.
// A page sends at most one a drawn frame (a drag's moves are coalesced per animation frame), so a
// client's commands, all its sessions' together, are paced at
// CommandBurst at once and one every CommandEvery after that: past that
// the server reads the client's next command only when it may
// (ClientRate.Wait).
const (
	CommandBurst = 120
	CommandEvery = time.Second / 60
)

// NewClientRate returns a token bucket per client of burst tokens, one
// more every every.
func NewClientRate(burst int, every time.Duration) *ClientRate {
	return &ClientRate{burst: float64(burst), every: every, buckets: map[string]*bucket{}}
}

// Take spends one of client's tokens and reports whether it had one; if
// not, wait is how long until it will.
func (c *ClientRate) Take(client string, now time.Time) (ok bool, wait time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.buckets[client]
	if b == nil {
		if len(c.buckets) >= maxBuckets {
			c.prune(now)
		}
		b = &bucket{tokens: c.burst, at: now}
		c.buckets[client] = b
	}
	b.tokens = math.Min(c.burst, b.tokens+now.Sub(b.at).Seconds()/c.every.Seconds())
	b.at = now
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	return false, time.Duration((1 - b.tokens) * float64(c.every))
}

// Wait waits until client may do the thing again, and takes its token;
// false when ctx ended first.
func (c *ClientRate) Wait(ctx context.Context, client string) bool {
	for {
		ok, wait := c.Take(client, time.Now())
		if ok {
			return true
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return false
		case <-t.C:
		}
	}
}

// Refund gives client back a token spent on nothing.
func (c *ClientRate) Refund(client string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if b := c.buckets[client]; b != nil {
		b.tokens = math.Min(c.burst, b.tokens+1)
	}
}

// Clients returns how many clients have a bucket (bounded by maxBuckets).
func (c *ClientRate) Clients() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.buckets)
}

// prune drops the buckets of clients that would be full again by now.
func (c *ClientRate) prune(now time.Time) {
	for h, b := range c.buckets {
		if b.tokens+now.Sub(b.at).Seconds()/c.every.Seconds() >= c.burst {
			delete(c.buckets, h)
		}
	}
}
