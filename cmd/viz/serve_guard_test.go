package main

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// TestServeHeadersAndHosts checks the security headers on every kind of
// response and the host allow-list against DNS rebinding: a request whose
// Host is not a loopback name (nor an -allow-host one) gets 421, and its
// websocket upgrade fails.
func TestServeHeadersAndHosts(t *testing.T) {
	url, stop := startServe(t, "serve", "-addr", "127.0.0.1:0", "-paused", "-log-level", "error", "-allow-host", "lab.example")
	defer stop()
	for _, path := range []string{"", "static/app.js", "healthz", "nothing-here"} {
		resp, err := http.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		for h, want := range map[string]string{"X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"} {
			if got := resp.Header.Get(h); got != want {
				t.Errorf("/%s: %s = %q, want %q", path, h, got, want)
			}
		}
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Errorf("/%s: Content-Security-Policy %q lacks frame-ancestors", path, csp)
		}
	}
	hostGet := func(host string) int {
		req, _ := http.NewRequest("GET", url, nil)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for host, want := range map[string]int{"evil.example": 421, "evil.example:80": 421, "localhost:1": 200, "LAB.example": 200, "[::1]:8080": 200} {
		if got := hostGet(host); got != want {
			t.Errorf("Host %q: status %d, want %d", host, got, want)
		}
	}
	ws := "ws" + strings.TrimPrefix(url, "http") + "ws"
	hdr := http.Header{"Host": {"evil.example"}, "Origin": {"http://evil.example"}}
	d := websocket.Dialer{HandshakeTimeout: 5 * time.Second}
	if c, resp, err := d.Dial(ws, hdr); err == nil {
		c.Close()
		t.Error("a rebinding page's websocket (Host and Origin evil.example) was upgraded")
	} else if resp == nil || resp.StatusCode != 421 {
		t.Errorf("rebinding websocket: %v (status %v), want 421", err, resp)
	}
}

// TestServeConnectionsPerClient checks that one client address cannot hold
// more than -max-conns-per-ip connections: the extra ones are closed at
// once, and a slot frees when a connection closes.
func TestServeConnectionsPerClient(t *testing.T) {
	url, stop := startServe(t, "serve", "-addr", "127.0.0.1:0", "-paused", "-log-level", "error", "-max-conns-per-ip", "3")
	defer stop()
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/")
	var conns []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns = append(conns, c)
	}
	extra, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer extra.Close()
	extra.SetReadDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(extra, "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
	if n, err := extra.Read(make([]byte, 64)); err == nil {
		t.Errorf("a 4th connection was served (%d bytes), want it closed", n)
	}
	conns[0].Close()
	time.Sleep(100 * time.Millisecond)
	resp, err := http.Get(url + "healthz")
	if err != nil {
		t.Fatalf("after a connection closed, a new one failed: %v", err)
	}
	resp.Body.Close()
}

// TestServeShutdownWithSlowRequest is the shutdown case: a request
// still being sent at SIGTERM must not take the sessions' close frames or
// the clean exit with it.
func TestServeShutdownWithSlowRequest(t *testing.T) {
	url, stop := startServe(t, "serve", "-addr", "127.0.0.1:0", "-paused", "-log-level", "error")
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/")
	ws := "ws" + strings.TrimPrefix(url, "http") + "ws"
	c, _, err := websocket.DefaultDialer.Dial(ws, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// A body trickled one byte at a time, never finished.
	slow, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	fmt.Fprintf(slow, "POST /healthz HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100000\r\n\r\nx")
	closed := make(chan error, 1)
	go func() {
		for {
			if _, _, err := c.ReadMessage(); err != nil {
				closed <- err
				return
			}
		}
	}()
	start := time.Now()
	if err := stop(); err != nil {
		t.Fatalf("shutdown with a slow request: %v", err)
	}
	if d := time.Since(start); d > 5500*time.Millisecond {
		t.Errorf("shutdown took %v, want ≤ 5 s", d)
	}
	if err := <-closed; !websocket.IsCloseError(err, websocket.CloseGoingAway) {
		t.Errorf("the websocket got %v, want close 1001", err)
	}
}
