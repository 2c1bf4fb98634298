package loadtest

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// ChurnReport is the churn mode's result.
type ChurnReport struct {
	Connections int            `json:"connections"` // opened
	Seconds     float64        `json:"seconds"`
	ByWay       map[string]int `json:"by_way"`  // connections per way of dropping
	Failed      map[string]int `json:"failed"`  // per way: the connection did not get as far as the way needs (refused, dial error)
	Refused     int            `json:"refused"` // of the failures, sessions refused with 1013 (too many sessions)
	FirstError  string         `json:"first_error,omitempty"`
	BaselineG   int            `json:"baseline_goroutines"` // in process, before
	PeakG       int            `json:"peak_goroutines"`
	// NewClients: after the churn, this many fresh sessions were opened
	// and Served of them got a frame within 5 s.
	NewClients int `json:"new_clients"`
	Served     int `json:"served"`
}

// The ways a churn connection ends.
var churnWays = []string{
	"clean",          // hello and a frame, close 1000, wait for the server's close
	"fin",            // hello, then the TCP connection closed without a close frame
	"rst",            // hello, then the TCP connection reset (SO_LINGER 0)
	"never-read",     // upgrade, read nothing for up to 1 s, reset
	"burst-drop",     // hello, 20 commands at once, reset without reading the replies
	"bad-config",     // a configuration the server refuses (1008)
	"half-request",   // TCP, half an HTTP upgrade request, close
	"no-101-read",    // TCP, a whole upgrade request, close before reading the 101
	"silent-tcp",     // TCP connect, send nothing, close
	"handshake-hang", // TCP, half a request, wait 1 s, reset
}

func runChurn(ctx context.Context, o Options, t *target, r *Report) error {
	t0 := time.Now()
	r.Before = t.sample(t0)
	c := &ChurnReport{ByWay: map[string]int{}, Failed: map[string]int{}, BaselineG: r.Before.Goroutines, PeakG: r.Before.Goroutines}
	r.Churn = c
	u := t.url + "?" + o.Query
	deadline := t0.Add(o.Duration)
	o.note("churn: %d connections, %d at a time, at most %v", o.N, o.Concurrency, o.Duration)

	var mu sync.Mutex
	note := func(way, code string, err error) {
		mu.Lock()
		defer mu.Unlock()
		c.ByWay[way]++
		if code != "" {
			r.CloseCodes[code]++
		}
		if err != nil {
			c.Failed[way]++
			if code == "1013" {
				c.Refused++
			}
			if c.FirstError == "" {
				c.FirstError = way + ": " + err.Error()
			}
		}
	}
	sem := make(chan struct{}, o.Concurrency)
	var wg sync.WaitGroup
	stopSampler := make(chan struct{})
	samplerDone := make(chan struct{})
	spawn(func() {
		defer close(samplerDone)
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stopSampler:
				return
			case <-tick.C:
				s := t.sample(t0)
				mu.Lock()
				c.PeakG = max(c.PeakG, s.Goroutines)
				if s.RSSMB > r.During.RSSMB {
					r.During = s
				}
				mu.Unlock()
			}
		}
	})
	for i := range o.N {
		if ctx.Err() != nil || time.Now().After(deadline) {
			break
		}
		way := churnWays[i%len(churnWays)]
		sem <- struct{}{}
		wg.Add(1)
		c.Connections++
		spawn(func() {
			defer func() { <-sem; wg.Done() }()
			code, err := churnOne(u, way)
			note(way, code, err)
		})
		if (i+1)%500 == 0 {
			o.note("churn: %d connections opened", i+1)
		}
	}
	wg.Wait()
	close(stopSampler)
	<-samplerDone
	c.Seconds = round3(time.Since(t0).Seconds())

	r.After, r.SettleSeconds, r.Settled = t.settle(t0, c.BaselineG, 2, 30*time.Second)
	r.SettleSeconds = round3(r.SettleSeconds)

	// New clients are served.
	c.NewClients = 4
	served := make(chan bool, c.NewClients)
	for range c.NewClients {
		spawn(func() { served <- freshSession(u) })
	}
	for range c.NewClients {
		if <-served {
			c.Served++
		}
	}
	return nil
}

// freshSession reports whether a new session gets a frame within 5 s; it
// closes it cleanly. A refusal with 1013 "try again later" is retried as a
// browser would, for up to 5 s: the server may still count itself
// saturated for its two load samples after the churn's stalled clients
// left (see stream's admission by load).
func freshSession(u string) bool {
	var cl *client
	for deadline := time.Now().Add(5 * time.Second); ; {
		var err error
		cl, err = dial(u, kindNormal, time.Now())
		if err != nil {
			return false
		}
		if !cl.refused() {
			break
		}
		if cl.closeCode != strconv.Itoa(websocket.CloseTryAgainLater) || time.Now().After(deadline) {
			return false
		}
		time.Sleep(500 * time.Millisecond)
	}
	defer cl.conn.Close()
	cl.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		mt, _, err := cl.conn.ReadMessage()
		if err != nil {
			return false
		}
		if mt == websocket.BinaryMessage {
			break
		}
	}
	cl.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
	cl.conn.SetReadDeadline(time.Now().Add(2 * time.Second))
	for {
		if _, _, err := cl.conn.NextReader(); err != nil {
			return true
		}
	}
}

// churnOne opens one connection and drops it the given way; it returns
// the close code the server sent, if the way waits for one.
func churnOne(u, way string) (code string, err error) {
	switch way {
	case "half-request", "no-101-read", "silent-tcp", "handshake-hang":
		return "", rawTCP(u, way)
	case "bad-config":
		cl, err := dial(u+"&m=100000", kindNormal, time.Now())
		if err != nil {
			return "", err
		}
		defer cl.conn.Close()
		if !cl.refused() {
			cl.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			cl.read()
		}
		if cl.closeCode != "1008" {
			return cl.closeCode, fmt.Errorf("bad configuration: close %s, want 1008", cl.closeCode)
		}
		return cl.closeCode, nil
	case "never-read":
		kind := kindNeverRead
		cl, err := dial(u, kind, time.Now())
		if err != nil {
			return "", err
		}
		if cl.refused() {
			cl.conn.Close()
			return cl.closeCode, fmt.Errorf("refused: %s %s", cl.closeCode, cl.closeReason)
		}
		time.Sleep(time.Duration(rand.Int64N(int64(time.Second))))
		reset(cl.conn.NetConn())
		return "", nil
	}
	cl, err := dial(u, kindNormal, time.Now())
	if err != nil {
		return "", err
	}
	if cl.refused() {
		cl.conn.Close()
		return cl.closeCode, fmt.Errorf("refused: %s %s", cl.closeCode, cl.closeReason)
	}
	switch way {
	case "clean":
		cl.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		for {
			mt, _, err := cl.conn.ReadMessage()
			if err != nil {
				cl.conn.Close()
				return "", fmt.Errorf("no frame: %v", err)
			}
			if mt == websocket.BinaryMessage {
				break
			}
		}
		cl.finish()
		return cl.closeCode, nil
	case "fin":
		cl.conn.NetConn().Close()
	case "rst":
		reset(cl.conn.NetConn())
	case "burst-drop":
		for i := range 20 {
			cl.conn.WriteMessage(websocket.TextMessage, fmt.Appendf(nil, `{"id":%d,"op":"speed","speed":60}`, i+1))
		}
		reset(cl.conn.NetConn())
	}
	return "", nil
}

// reset closes a TCP connection with a reset (SO_LINGER 0).
func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	c.Close()
}

// rawTCP drops a connection during the HTTP upgrade.
func rawTCP(u, way string) error {
	pu, err := url.Parse(u)
	if err != nil {
		return err
	}
	conn, err := net.DialTimeout("tcp", pu.Host, 5*time.Second)
	if err != nil {
		return err
	}
	req := "GET " + pu.RequestURI() + " HTTP/1.1\r\nHost: " + pu.Host + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
	full := req + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
	switch way {
	case "half-request":
		_, err = io.WriteString(conn, req)
		conn.Close()
	case "no-101-read":
		_, err = io.WriteString(conn, full)
		reset(conn)
	case "silent-tcp":
		time.Sleep(time.Duration(rand.Int64N(int64(200 * time.Millisecond))))
		conn.Close()
	case "handshake-hang":
		_, err = io.WriteString(conn, req[:len(req)/2])
		time.Sleep(time.Second)
		reset(conn)
	}
	return err
}

func (c *ChurnReport) writeText(w io.Writer) {
	fmt.Fprintf(w, "churn:        %d connections in %.1f s:", c.Connections, c.Seconds)
	ways := make([]string, 0, len(c.ByWay))
	for k := range c.ByWay {
		ways = append(ways, k)
	}
	sort.Strings(ways)
	var parts []string
	for _, k := range ways {
		p := fmt.Sprintf(" %s %d", k, c.ByWay[k])
		if c.Failed[k] > 0 {
			p += fmt.Sprintf(" (%d failed)", c.Failed[k])
		}
		parts = append(parts, p)
	}
	fmt.Fprintln(w, strings.Join(parts, ","))
	if c.FirstError != "" {
		fmt.Fprintf(w, "first failure: %s (%d of the failures: 1013 too many sessions)\n", c.FirstError, c.Refused)
	}
	if c.BaselineG >= 0 {
		fmt.Fprintf(w, "goroutines:   baseline %d, peak %d during the churn\n", c.BaselineG, c.PeakG)
	}
	fmt.Fprintf(w, "afterwards:   %d of %d new sessions got a frame within 5 s\n", c.Served, c.NewClients)
}
