package admit

import (
	"context"
	"errors"
	"net/http/httptest"
	"net/netip"
	"sync"
	"testing"
	"time"

	"dgpviz/internal/turn"
)

// TestClientOf: the loopback range is one client, an IPv6 address counts
// by its /64, an IPv4 address (mapped into IPv6 too) as it is.
func TestClientOf(t *testing.T) {
	for _, tc := range []struct{ remote, want string }{
		{"127.0.0.1:5000", "loopback"},
		{"127.9.8.7:1", "loopback"}, // the whole 127/8
		{"[::1]:80", "loopback"},
		{"::ffff:127.0.0.2", "loopback"},
		{"192.0.2.7:443", "192.0.2.7"},
		{"192.0.2.7", "192.0.2.7"},
		{"[::ffff:192.0.2.7]:80", "192.0.2.7"},
		{"[2001:db8:1:2:3:4:5:6]:443", "2001:db8:1:2::/64"},
		{"2001:db8:1:2:ffff::1", "2001:db8:1:2::/64"}, // same /64, same client
		{"[2001:db8:1:3::1]:1", "2001:db8:1:3::/64"},
		{"[fe80::1%eth0]:80", "fe80::/64"},
		{"not an address", "not an address"},
	} {
		if got := ClientOf(tc.remote); got != tc.want {
			t.Errorf("ClientOf(%q) = %q, want %q", tc.remote, got, tc.want)
		}
	}
}

// TestRequestClient: X-Forwarded-For counts only with TrustProxy and only
// from loopback (a proxy on this machine), by its last address.
func TestRequestClient(t *testing.T) {
	r := httptest.NewRequest("GET", "/ws", nil)
	r.RemoteAddr = "127.0.0.1:4000"
	r.Header.Add("X-Forwarded-For", "198.51.100.1, 203.0.113.9")
	if got := RequestClient(r, false); got != "loopback" {
		t.Errorf("untrusted proxy header: %q, want loopback", got)
	}
	if got := RequestClient(r, true); got != "203.0.113.9" {
		t.Errorf("trusted proxy: %q, want the last address 203.0.113.9", got)
	}
	r.RemoteAddr = "192.0.2.1:4000"
	if got := RequestClient(r, true); got != "192.0.2.1" {
		t.Errorf("a header from a remote client: %q, want its own address", got)
	}
}

// TestPoolRotation: with one turn held, three waiters of client a and one
// of client b are served a, b, a, a — b waits for one of a's, not three.
func TestPoolRotation(t *testing.T) {
	p := NewPool(1, 1)
	p.Rest = func() bool { return true } // sessions play: one turn
	holder, _ := p.Admit("holder")
	done, err := holder.take(t.Context(), 1)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := p.Admit("a")
	b, _ := p.Admit("b")
	var mu sync.Mutex
	var order []string
	var wg sync.WaitGroup
	wait := func(j *Job, name string) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := j.take(context.Background(), 1)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			order = append(order, name)
			mu.Unlock()
			d()
		}()
	}
	waiting := func(n int) { // until n waiters are queued
		for deadline := time.Now().Add(5 * time.Second); ; {
			p.mu.Lock()
			k := 0
			for _, c := range p.clients {
				k += len(c.waiting)
			}
			p.mu.Unlock()
			if k == n || time.Now().After(deadline) {
				return
			}
			time.Sleep(time.Millisecond)
		}
	}
	for i := range 3 {
		wait(a, "a")
		waiting(i + 1)
	}
	wait(b, "b")
	waiting(4)
	done()
	wg.Wait()
	if got := len(order); got != 4 || order[0] != "a" || order[1] != "b" {
		t.Errorf("served %v, want a, b, a, a", order)
	}
	if st := p.Stats(); st.Turns != 5 {
		t.Errorf("%d turns given, want 5", st.Turns)
	}
}

// TestPoolBusyAndCancel: a client's jobs past MaxClientJobs are refused
// as busy (the server's own are not); a job whose context ends stops
// waiting at once, and a turn given to it meanwhile goes on to the next.
func TestPoolBusyAndCancel(t *testing.T) {
	p := NewPool(1, 1)
	p.Rest = func() bool { return true } // sessions play: one turn
	var jobs []*Job
	for range MaxClientJobs {
		j, err := p.Admit("a")
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, j)
	}
	if _, err := p.Admit("a"); !errors.Is(err, ErrClientBusy) {
		t.Fatalf("job %d: %v, want busy", MaxClientJobs+1, err)
	}
	if _, err := p.Admit("b"); err != nil {
		t.Fatalf("another client refused: %v", err)
	}
	for range MaxClientJobs + 1 {
		if _, err := p.Admit(ServerClient); err != nil {
			t.Fatalf("the server's own work refused: %v", err)
		}
	}
	jobs[0].End()
	jobs[0].End() // once
	if _, err := p.Admit("a"); err != nil {
		t.Fatalf("after a job ended: %v", err)
	}

	done, _ := jobs[1].take(t.Context(), 1)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := jobs[2].take(ctx, 1)
		errc <- err
	}()
	time.Sleep(10 * time.Millisecond)
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("a cancelled wait: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a cancelled wait did not end")
	}
	done()
	// The turn is free again: a take succeeds at once.
	ctx2, cancel2 := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel2()
	d, err := jobs[3].take(ctx2, 1)
	if err != nil {
		t.Fatalf("the turn was not given back: %v", err)
	}
	d()
	d() // once
	if p.inUse != 0 {
		t.Errorf("%d turns out after all, want 0", p.inUse)
	}
}

// TestTurnWithoutPool: work under a context without a pool runs at once;
// an ended context stops it.
func TestTurnWithoutPool(t *testing.T) {
	ran := false
	if err := turn.Do(context.Background(), func() { ran = true }); err != nil || !ran {
		t.Errorf("Do: %v, ran %v", err, ran)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := turn.Do(ctx, func() { t.Error("ran after the end") }); err == nil {
		t.Error("Do after the end: no error")
	}
}

// TestPoolIdle: while no session plays the pool hands out a turn per core
// and its turns do not rest; while sessions play, PoolTurns.
func TestPoolIdle(t *testing.T) {
	playing := false
	p := NewPool(1, 0.5)
	p.idle = 2
	p.Rest = func() bool { return playing }
	j, _ := p.Admit("a")
	d1, _ := j.take(t.Context(), 1)
	d2, err := j.take(t.Context(), 1)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond)
	d1()
	d2()
	if p.inUse != 0 {
		t.Errorf("idle: %d turns out after both ended, want 0 (no rest)", p.inUse)
	}
	playing = true
	d1, _ = j.take(t.Context(), 1)
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if _, err := j.take(ctx, 1); err == nil {
		t.Error("a second turn while sessions play")
	}
	d1()
}

// FuzzClientOf: any remote address or forwarded header gives a client
// without panicking, every loopback address the same one, and an address
// with a port the same client as without.
func FuzzClientOf(f *testing.F) {
	for _, s := range []string{"127.0.0.1:80", "[::1]:1", "192.0.2.1", "[2001:db8::1]:443", "fe80::1%eth0", "", "[", "1.2.3.4, 5.6.7.8", "::ffff:10.0.0.1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := ClientOf(s)
		if a, err := netip.ParseAddr(s); err == nil && a.Unmap().IsLoopback() && c != loopbackClient {
			t.Errorf("ClientOf(%q) = %q, a loopback address", s, c)
		}
		if a, err := netip.ParseAddr(s); err == nil && a.Zone() == "" {
			if got := ClientOf(netip.AddrPortFrom(a, 8080).String()); got != c {
				t.Errorf("ClientOf(%q) = %q but with a port %q", s, c, got)
			}
		}
		r := httptest.NewRequest("GET", "/ws", nil)
		r.RemoteAddr = "127.0.0.1:1"
		r.Header.Set("X-Forwarded-For", s)
		RequestClient(r, true)
	})
}
