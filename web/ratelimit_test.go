package web

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestClientRate: a client gets its burst, then one render per interval;
// other clients are not affected; the map stays bounded.
func TestClientRate(t *testing.T) {
	c := newClientRate(3, time.Second)
	t0 := time.Unix(1000, 0)
	for i := range 3 {
		if ok, _ := c.take("10.0.0.1:5000", t0); !ok {
			t.Fatalf("render %d of the burst refused", i+1)
		}
	}
	ok, wait := c.take("10.0.0.1:5001", t0) // same host, another port
	if ok || wait != time.Second {
		t.Fatalf("4th render: ok %v, wait %v; want refused, 1s", ok, wait)
	}
	if ok, _ := c.take("10.0.0.2:5000", t0); !ok {
		t.Fatal("another client refused")
	}
	if ok, _ := c.take("10.0.0.1:5000", t0.Add(1100*time.Millisecond)); !ok {
		t.Fatal("refused after the interval")
	}
	if ok, _ := c.take("127.0.0.2:5000", t0); !ok {
		t.Fatal("loopback refused before its burst")
	}
	for range 2 {
		c.take("[::1]:80", t0)
	}
	if ok, _ := c.take("127.0.0.1:5000", t0); ok {
		t.Fatal("the loopback range is one client: its fourth render was allowed")
	}
	const maxBuckets = 4096 // stream.ClientRate's bound
	for i := range maxBuckets + 10 {
		c.take(string(rune('a'+i%26))+time.Duration(i).String(), t0)
	}
	c.take("late", t0.Add(time.Hour))
	if n := c.Clients(); n > maxBuckets {
		t.Errorf("%d buckets kept, want ≤ %d", n, maxBuckets)
	}
}

// TestFigureRateLimit: with the default rate a client may have six new
// figures drawn at once; the seventh gets 429 with Retry-After, while a
// figure already drawn is still served from the cache; a bad request
// costs nothing.
func TestFigureRateLimit(t *testing.T) {
	hs := newSite(t, WithFigureRate(figureBurst, figureEvery))
	key, _ := liveSession(t, hs.URL, "play=0&speed=0")
	base := hs.URL + "/figure/messages.svg?session=" + key + "&samples="
	for i := range figureBurst {
		if r, body := get(t, base+strconv.Itoa(100+i)); r.StatusCode != 200 {
			t.Fatalf("render %d: %d %s", i+1, r.StatusCode, body)
		}
	}
	r, body := get(t, base+"999")
	if r.StatusCode != http.StatusTooManyRequests || r.Header.Get("Retry-After") == "" || !strings.Contains(body, "try again in") {
		t.Fatalf("render %d: %d %q (Retry-After %q), want 429 saying when", figureBurst+1, r.StatusCode, body, r.Header.Get("Retry-After"))
	}
	if r, _ := get(t, base+"100"); r.StatusCode != 200 || r.Header.Get("X-Figure-Cache") != "hit" {
		t.Errorf("a cached figure: %d %q, want 200 hit", r.StatusCode, r.Header.Get("X-Figure-Cache"))
	}
}

// TestBadRequestCostsNoRender: with a burst of one, a request refused as
// bad while drawing (400) leaves the client its render.
func TestBadRequestCostsNoRender(t *testing.T) {
	hs := newSite(t, WithFigureRate(1, time.Hour))
	key, _ := liveSession(t, hs.URL, "play=0&speed=0")
	if r, _ := get(t, hs.URL+"/figure/messages.svg?session="+key+"&inputs=NaN:1"); r.StatusCode != 400 {
		t.Fatalf("bad inputs: %d, want 400", r.StatusCode)
	}
	if r, body := get(t, hs.URL+"/figure/messages.svg?session="+key+"&samples=200"); r.StatusCode != 200 {
		t.Fatalf("after a bad request: %d %s, want 200", r.StatusCode, body)
	}
}
