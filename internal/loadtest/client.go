package loadtest

import (
	"dgpviz/internal/wire"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// Client kinds.
const (
	kindNormal    = "normal"
	kindSlowRead  = "slow-read"  // reads one message a second
	kindNeverRead = "never-read" // reads nothing until the end
	kindFollower  = "follower"   // follows a shared session read-only (no probes)
)

var dialer = websocket.Dialer{HandshakeTimeout: 10 * time.Second, ReadBufferSize: 64 << 10}

// client is one websocket session.
type client struct {
	kind    string
	started atomic.Bool // a reader goroutine runs (start)
	slow    atomic.Bool // pause a second after each message (kindSlowRead until the end)
	t0      time.Time   // the run's start: times are durations since it
	conn    *websocket.Conn
	speed   int    // the session's speed, from the hello (probes set it again)
	share   string // the session's share key, from the hello (followers mode)
	budget  int64  // the server's memory budget, from the hello (0: none)

	// written by the reader goroutine; read after done is closed
	frames      []time.Duration // arrival of each binary message
	bytes       int64           // binary bytes received
	badFrames   int             // binary messages stream.Decode rejected
	firstFrame  string          // the first frame's "type"
	errReplies  int
	closeCode   string // code the server closed with ("1006": no close frame)
	closeReason string
	closedAt    time.Duration // when the reader ended
	done        chan struct{}

	mu        sync.Mutex
	pending   map[int]time.Duration // probe id → send time
	latencies []probe
	nextID    int
}

type probe struct{ sent, rtt time.Duration }

// Every load-test client is a client of its own to the server's
// per-client limits: it names an address of its own in X-Forwarded-For,
// which the in-process server trusts (viz serve -trust-proxy) and which
// is otherwise ignored. The attacks of -mode attack all come from one.
var identities atomic.Uint32

// newIdentity returns an address no other client of this run has.
func newIdentity() string {
	k := identities.Add(1)
	return fmt.Sprintf("10.%d.%d.%d", 1+k>>16&0xff, k>>8&0xff, k&0xff)
}

// dial opens a session as a client of its own and reads its hello.
func dial(url string, kind string, t0 time.Time) (*client, error) {
	return dialAs(url, kind, t0, newIdentity())
}

// dialAs opens a session as the client named identity and reads its hello.
func dialAs(url string, kind string, t0 time.Time, identity string) (*client, error) {
	d := dialer
	if kind != kindNormal {
		// A small receive buffer, so that a client that does not read
		// makes the server's writes block soon, as a stalled browser would.
		d.NetDialContext = smallBufferDial
	}
	h := http.Header{}
	if identity != "" {
		h.Set("X-Forwarded-For", identity)
	}
	conn, resp, err := d.Dial(url, h)
	if err != nil {
		if resp != nil {
			return nil, fmt.Errorf("HTTP %d: %w", resp.StatusCode, err)
		}
		return nil, err
	}
	c := &client{kind: kind, t0: t0, conn: conn, pending: map[int]time.Duration{}, done: make(chan struct{}), speed: -1}
	c.slow.Store(kind == kindSlowRead)
	// The hello comes once the model is built: a preset's restarts (an
	// autoencoder of images takes seconds) come first.
	conn.SetReadDeadline(time.Now().Add(60 * time.Second))
	mt, msg, err := conn.ReadMessage()
	if err != nil {
		c.noteClose(err)
		close(c.done)
		conn.Close()
		return c, nil // refused: the close code tells why
	}
	conn.SetReadDeadline(time.Time{})
	if mt == websocket.TextMessage {
		var h struct {
			Type   string `json:"type"`
			Share  string `json:"share_key"`
			Config *struct {
				Speed int `json:"speed"`
			} `json:"config"`
			Limits *struct {
				ServerMemory int64 `json:"server_memory"`
			} `json:"limits"`
		}
		if json.Unmarshal(msg, &h) == nil && h.Type == "hello" && h.Config != nil {
			c.speed = h.Config.Speed
		}
		if h.Limits != nil {
			c.budget = h.Limits.ServerMemory
		}
		c.share = h.Share
	}
	return c, nil
}

// refused reports whether the server closed the session at once.
func (c *client) refused() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// noteClose records how the connection ended.
func (c *client) noteClose(err error) {
	c.closedAt = time.Since(c.t0)
	var ce *websocket.CloseError
	if errors.As(err, &ce) {
		c.closeCode, c.closeReason = strconv.Itoa(ce.Code), ce.Text
		return
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		c.closeCode = "timeout" // still open: no close within the wait
	} else {
		c.closeCode = "1006" // no close frame (EOF, reset)
	}
	c.closeReason = err.Error()
}

// start starts the reader goroutine.
func (c *client) start() {
	c.started.Store(true)
	spawn(c.read)
}

// read is the reader goroutine: it counts frames, matches acks to probes,
// and ends when the connection does. Slow readers pause between messages.
func (c *client) read() {
	defer close(c.done)
	for {
		mt, r, err := c.conn.NextReader()
		if err != nil {
			c.noteClose(err)
			return
		}
		now := time.Since(c.t0)
		switch mt {
		case websocket.BinaryMessage:
			if len(c.frames) == 0 { // check the first frame decodes
				b, err := io.ReadAll(r)
				if err != nil {
					c.noteClose(err)
					return
				}
				if d, err := wire.Decode(b); err != nil {
					c.badFrames++
				} else {
					c.firstFrame, _ = d["type"].(string)
				}
				c.bytes += int64(len(b))
			} else if n, err := io.Copy(io.Discard, r); err != nil {
				c.noteClose(err)
				return
			} else {
				c.bytes += n
			}
			c.frames = append(c.frames, now)
		case websocket.TextMessage:
			b, err := io.ReadAll(r)
			if err != nil {
				c.noteClose(err)
				return
			}
			var m struct {
				Type string `json:"type"`
				ID   int    `json:"id"`
			}
			if json.Unmarshal(b, &m) == nil {
				if m.Type == "error" {
					c.errReplies++
				}
				c.mu.Lock()
				if sent, ok := c.pending[m.ID]; ok && m.ID > 0 {
					delete(c.pending, m.ID)
					c.latencies = append(c.latencies, probe{sent, now - sent})
				}
				c.mu.Unlock()
			}
		}
		if c.slow.Load() {
			time.Sleep(time.Second)
		}
	}
}

// probe sends a speed command (the session's own speed: a no-op) and
// records its send time; the reader times the ack.
func (c *client) probe() error {
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	c.pending[id] = time.Since(c.t0)
	c.mu.Unlock()
	speed := c.speed
	if speed < 0 {
		speed = 60
	}
	c.conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
	return c.conn.WriteMessage(websocket.TextMessage, fmt.Appendf(nil, `{"id":%d,"op":"speed","speed":%d}`, id, speed))
}

// probes sends a probe every period until stop is closed or the
// connection ends; the first after a random part of a period.
func (c *client) probes(period, offset time.Duration, stop <-chan struct{}) {
	timer := time.NewTimer(offset)
	defer timer.Stop()
	for {
		select {
		case <-stop:
			return
		case <-c.done:
			return
		case <-timer.C:
			if c.probe() != nil {
				return
			}
			timer.Reset(period)
		}
	}
}

// finish closes the session cleanly (close frame 1000, wait for the
// server's) and waits for the reader. A never-reading client reads now,
// to learn whether the server has closed it.
func (c *client) finish() {
	c.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, "load test done"), time.Now().Add(time.Second))
	c.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	c.slow.Store(false) // drain at full speed now
	if c.started.Load() {
		<-c.done
	} else {
		c.read()
	}
	c.conn.Close()
}

// unanswered returns the probes without an ack.
func (c *client) unanswered() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pending)
}
