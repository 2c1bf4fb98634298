package web

import (
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"

	"dgpviz/internal/admit"
)

// secureHeaders sets the headers every response carries: no MIME
// sniffing, no framing by other sites (the controls could be clickjacked),
// no referrer sent on.
func secureHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("Referrer-Policy", "no-referrer")
		if hd.Get("Content-Security-Policy") == "" {
			hd.Set("Content-Security-Policy", "frame-ancestors 'none'")
		}
		h.ServeHTTP(w, r)
	})
}

// loopbackHosts are the names of the loopback interface.
var loopbackHosts = []string{"localhost", "127.0.0.1", "::1"}

// LoopbackHosts returns the host names a server on a loopback address
// answers to.
func LoopbackHosts() []string { return slices.Clone(loopbackHosts) }

// AllowHosts answers only requests whose Host header names one of hosts
// (without port; "*" allows any), with 421 Misdirected Request otherwise.
// It defends against DNS rebinding: a page on evil.example whose name
// resolves to 127.0.0.1 sends "Host: evil.example", which the same-origin
// check of the websocket alone would accept.
func AllowHosts(h http.Handler, hosts []string) http.Handler {
	if slices.Contains(hosts, "*") {
		return h
	}
	allowed := map[string]bool{}
	for _, x := range hosts {
		allowed[strings.ToLower(strings.Trim(x, "[]"))] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if hh, _, err := net.SplitHostPort(host); err == nil {
			host = hh
		}
		if !allowed[strings.ToLower(strings.Trim(host, "[]"))] {
			http.Error(w, "unknown host name (start viz serve with -allow-host "+truncateHost(host)+" to accept it)", http.StatusMisdirectedRequest)
			return
		}
		h.ServeHTTP(w, r)
	})
}

func truncateHost(h string) string {
	if len(h) > 64 {
		return h[:64]
	}
	return h
}

// LimitPerClient returns a listener that accepts at most n open
// connections from each client (admit.ClientOf: an address, the loopback
// range as one, an IPv6 /64 as one): a client that opens more has the
// extra ones closed at once, so that one client cannot hold every
// connection the server can serve.
func LimitPerClient(ln net.Listener, n int) net.Listener {
	return &perClientListener{Listener: ln, max: n, open: map[string]int{}}
}

type perClientListener struct {
	net.Listener
	max  int
	mu   sync.Mutex
	open map[string]int
}

func (l *perClientListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		ip := admit.ClientOf(c.RemoteAddr().String())
		l.mu.Lock()
		ok := l.open[ip] < l.max
		if ok {
			l.open[ip]++
		}
		l.mu.Unlock()
		if !ok {
			c.Close()
			continue
		}
		return &countedConn{Conn: c, release: func() {
			l.mu.Lock()
			if l.open[ip]--; l.open[ip] <= 0 {
				delete(l.open, ip)
			}
			l.mu.Unlock()
		}}, nil
	}
}

// countedConn releases its slot once, on the first Close.
type countedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *countedConn) Close() error {
	c.once.Do(c.release)
	return c.Conn.Close()
}
