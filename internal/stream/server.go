package stream

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"dgpviz/internal/engine"
	"dgpviz/internal/montecarlo"

	"github.com/gorilla/websocket"
)

// Websocket timing, as in gorilla/websocket's chat example.
const (
	writeWait  = 10 * time.Second  // time allowed to write one message
	pongWait   = 60 * time.Second  // time allowed to read the next pong
	pingPeriod = pongWait * 9 / 10 // send pings this often; < pongWait
	closeWait  = 2 * time.Second   // time allowed for the close handshake
	outQueue   = 64                // queued replies and setups per session
	cmdQueue   = 16                // queued commands per session
)

// Close codes used by the server (RFC 6455 §7.4.1).
const (
	closePolicy    = websocket.ClosePolicyViolation // 1008: bad configuration, client not reading
	closeTooBig    = websocket.CloseMessageTooBig   // 1009: message above the hard read limit
	closeGoingAway = websocket.CloseGoingAway       // 1001: server shutting down
	closeTryLater  = websocket.CloseTryAgainLater   // 1013: too many sessions
)

// Options configure a Server.
type Options struct {
	Catalog  *Catalog
	Limits   Limits
	Defaults Config // configuration for parameters a client's URL leaves out
	// AllowedOrigins are host patterns (path.Match syntax, e.g.
	// "*.example.org" or "*") accepted in the Origin header besides the
	// request's own host. Empty: same-origin only.
	AllowedOrigins []string
	// Workers is each optimizer's evaluator workers (0: one per CPU).
	Workers int
	// BaselineIters is the number of L-BFGS iterations of the robot
	// view's one-layer GP baseline, fitted once per data set in the
	// background (0: DefaultBaselineIters).
	BaselineIters int
	Logger        *slog.Logger
}

// DefaultBaselineIters: by 1500 iterations the baseline's test RMSE has
// settled (9.2–9.5 dBm on the real data at 1500 to 6000 iterations),
// where at 300 it still depended on the optimizer's path (9.6 or 15.1 dBm
// from builds that differ only in rounding); about 2 s of one core.
const DefaultBaselineIters = 1500

// Server serves websocket sessions: one model and optimizer per connection.
type Server struct {
	cat     *Catalog
	limits  Limits
	def     Config
	workers int
	// baselines are the robot view's baselines, fitted in the background
	// under bg, which Shutdown cancels.
	baselines *baselineCache
	bgCancel  context.CancelFunc
	log       *slog.Logger
	origins   []string
	upgrader  websocket.Upgrader

	mu       sync.Mutex
	sessions map[*session]struct{}
	closing  bool
	wg       sync.WaitGroup
	nextID   atomic.Uint64
}

// NewServer returns a server; it checks the default configuration.
func NewServer(o Options) (*Server, error) {
	if o.Catalog == nil {
		var err error
		if o.Catalog, err = NewCatalog(nil, o.Limits); err != nil {
			return nil, err
		}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if err := o.Defaults.Validate(o.Limits, o.Catalog); err != nil {
		return nil, errorf("default configuration: %w", err)
	}
	for _, p := range o.AllowedOrigins {
		if _, err := path.Match(p, ""); err != nil {
			return nil, errorf("allowed origin pattern %q: %v", p, err)
		}
	}
	if o.BaselineIters <= 0 {
		o.BaselineIters = DefaultBaselineIters
	}
	bg, cancel := context.WithCancel(context.Background())
	s := &Server{cat: o.Catalog, limits: o.Limits, def: o.Defaults, workers: o.Workers, baselines: newBaselineCache(bg, o.BaselineIters),
		bgCancel: cancel, log: o.Logger, origins: o.AllowedOrigins, sessions: map[*session]struct{}{}}
	s.upgrader = websocket.Upgrader{ReadBufferSize: 4096, WriteBufferSize: 16384, CheckOrigin: s.checkOrigin}
	return s, nil
}

// Catalog returns the server's data sets.
func (s *Server) Catalog() *Catalog { return s.cat }

// Defaults returns the configuration used for absent URL parameters.
func (s *Server) Defaults() Config { return s.def }

// Limits returns the server's limits.
func (s *Server) Limits() Limits { return s.limits }

// checkOrigin accepts requests without an Origin header (not from a
// browser), same-origin requests, and origins matching AllowedOrigins.
func (s *Server) checkOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	u, err := url.Parse(o)
	if err != nil {
		return false
	}
	if strings.EqualFold(u.Host, r.Host) {
		return true
	}
	for _, p := range s.origins {
		if ok, _ := path.Match(p, strings.ToLower(u.Host)); ok {
			return true
		}
	}
	return false
}

// Sessions returns the number of open sessions.
func (s *Server) Sessions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions)
}

// SessionStats returns the stats of every open session.
func (s *Server) SessionStats() []Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Stats
	for ss := range s.sessions {
		out = append(out, ss.stats())
	}
	return out
}

// ServeHTTP upgrades the request to a websocket and runs a session whose
// configuration comes from the URL query (see ParseQuery) until the socket
// closes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	conn, err := s.upgrader.Upgrade(w, r, nil)
	if err != nil {
		s.log.Info("websocket upgrade refused", "remote", r.RemoteAddr, "origin", r.Header.Get("Origin"), "err", err)
		return // the upgrader has answered
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	ss := &session{
		id: s.nextID.Add(1), srv: s, ctx: ctx, cancel: cancel,
		cmds: make(chan Command, cmdQueue), readerDone: make(chan struct{}), out: make(chan outMsg, outQueue), frames: newMailbox[*snapshot](), mc: newMCState(),
	}
	ss.log = s.log.With("session", ss.id, "remote", r.RemoteAddr)

	refuse := func(code int, text string) {
		ss.log.Info("session refused", "reason", text)
		conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, truncate(text, 120)), time.Now().Add(writeWait))
		conn.Close()
		cancel(nil)
	}
	s.mu.Lock()
	switch {
	case s.closing:
		s.mu.Unlock()
		refuse(closeGoingAway, "server is shutting down")
		return
	case len(s.sessions) >= s.limits.MaxSessions:
		s.mu.Unlock()
		refuse(closeTryLater, "too many sessions (limit "+strconv.Itoa(s.limits.MaxSessions)+"); close another tab")
		return
	}
	s.sessions[ss] = struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.sessions, ss)
		s.mu.Unlock()
		s.wg.Done()
	}()

	cfg, err := ParseQuery(r.URL.Query(), s.def)
	if err == nil {
		err = cfg.Validate(s.limits, s.cat)
	}
	hello := reply{Type: "hello", Session: ss.id, Limits: &s.limits, Sets: s.cat.Info(), Groups: engine.GroupNames()}
	hello.FigureKey = ss.mc.key // downloads of this session's figures (mcfigure.go)
	hello.InputColors = montecarlo.InputColorsHex()
	if err != nil {
		ss.send(outMsg{data: hello.bytes()})
		ss.reply(reply{Type: "error", Op: "connect", Error: err.Error()})
		ss.fail(closePolicy, err.Error())
	} else {
		hello.Config = &cfg
		ss.send(outMsg{data: hello.bytes()})
		if err := ss.build(cfg, true); err != nil {
			ss.reply(reply{Type: "error", Op: "connect", Error: err.Error()})
			ss.fail(closePolicy, err.Error())
		} else {
			ss.running = cfg.Play
			ss.publish()
		}
	}
	ss.log.Info("session started", "config", cfg.Query().Encode())

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); ss.writer(conn) }()
	go func() {
		defer wg.Done()
		if ss.ctx.Err() == nil {
			ss.run()
		}
	}()
	ss.reader(conn)
	wg.Wait()
	conn.Close()
	st := ss.stats()
	ss.log.Info("session ended", "cause", context.Cause(ss.ctx), "iterations", st.Iterations, "frames", st.Frames)
}

// reader reads commands until the connection fails or the session ends.
// It runs on the handler's goroutine; it never panics on input.
func (ss *session) reader(conn *websocket.Conn) {
	defer close(ss.readerDone)
	defer ss.cancel(errors.New("stream: connection closed by the client"))
	defer ss.recoverPanic("reader")
	limit := ss.srv.limits.MaxCommandBytes
	conn.SetReadLimit(hardReadLimit)
	conn.SetReadDeadline(time.Now().Add(pongWait))
	conn.SetPongHandler(func(string) error { return conn.SetReadDeadline(time.Now().Add(pongWait)) })
	buf := make([]byte, limit+1)
	for {
		mt, r, err := conn.NextReader()
		if err != nil {
			if errors.Is(err, websocket.ErrReadLimit) {
				ss.fail(closeTooBig, "message larger than the hard limit")
			}
			return
		}
		conn.SetReadDeadline(time.Now().Add(pongWait))
		n, err := io.ReadFull(r, buf)
		if err == nil { // more than limit bytes: discard the rest
			_, err = io.Copy(io.Discard, r)
			if err != nil {
				if errors.Is(err, websocket.ErrReadLimit) {
					ss.fail(closeTooBig, "message larger than the hard limit")
				}
				return
			}
			ss.reply(reply{Type: "error", Error: errorf("command larger than %d bytes (max_command_bytes)", limit).Error()})
			continue
		}
		if err != io.ErrUnexpectedEOF && err != io.EOF {
			if errors.Is(err, websocket.ErrReadLimit) {
				ss.fail(closeTooBig, "message larger than the hard limit")
			}
			return
		}
		if mt != websocket.TextMessage {
			ss.reply(reply{Type: "error", Error: errorf("binary messages are not commands; send JSON text").Error()})
			continue
		}
		c, err := ParseCommand(buf[:n])
		if err != nil {
			ss.reply(reply{Type: "error", ID: c.ID, Op: truncate(c.Op, 40), Error: err.Error()})
			continue
		}
		select {
		case ss.cmds <- c:
		case <-ss.ctx.Done():
			return
		}
	}
}

// writer is the connection's only writer: replies, setups and frames, and
// pings. Frames are built here from the latest snapshot, at most one per
// FrameInterval; a slow client skips snapshots instead of queueing them.
func (ss *session) writer(conn *websocket.Conn) {
	defer conn.Close() // also after a panic: the reader then ends
	defer ss.recoverPanic("writer")
	ping := time.NewTicker(pingPeriod)
	defer ping.Stop()
	f := newFramer()
	// Frame timing: a frame starts no sooner than FrameInterval after the
	// previous one; a frame without a new command's effect waits for the
	// (longer) adaptive gap of frameGap.
	slotTimer := time.NewTimer(time.Hour)
	slotTimer.Stop()
	defer slotTimer.Stop()
	var (
		slot        <-chan time.Time // non-nil while a frame waits for its slot
		slotAt      time.Time
		lastStart   time.Time
		gap         time.Duration
		lastApplied int64
	)
	wait := writeWait // shortened to closeWait once the session is closing
	write := func(m outMsg) bool {
		conn.SetWriteDeadline(time.Now().Add(wait))
		mt := websocket.TextMessage
		if m.binary {
			mt = websocket.BinaryMessage
		}
		if err := conn.WriteMessage(mt, m.data); err != nil {
			ss.cancel(errorf("write: %w", err))
			return false
		}
		return true
	}
	drain := func() bool {
		for {
			select {
			case m := <-ss.out:
				if !write(m) {
					return false
				}
			default:
				return true
			}
		}
	}
	sendFrame := func() bool {
		if !drain() {
			return false
		}
		snap, ok := ss.frames.take()
		if !ok {
			return true
		}
		t0 := time.Now()
		b, err := f.frame(snap)
		if err != nil {
			ss.log.Error("frame", "err", err)
			return true
		}
		lastStart, gap, lastApplied = t0, frameGap(time.Since(t0), f), snap.applied
		if !write(outMsg{binary: true, data: b}) {
			return false
		}
		ss.written.Add(1)
		return true
	}
	for {
		select {
		case <-ss.ctx.Done():
			wait = closeWait // do not let a stalled client hold up a shutdown
			drain()
			ss.closeMu.Lock()
			code, text := ss.closeCode, ss.closeText
			ss.closeMu.Unlock()
			if code != 0 {
				conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, truncate(text, 120)), time.Now().Add(writeWait))
				// Wait for the client's close frame, which ends the reader.
				conn.SetReadDeadline(time.Now().Add(closeWait))
				select {
				case <-ss.readerDone:
				case <-time.After(closeWait):
				}
			}
			conn.Close()
			return
		case m := <-ss.out:
			if !write(m) {
				conn.Close()
				return
			}
		case <-ss.frames.notify:
			g := gap
			ss.frames.peek(func(s *snapshot) {
				if s.applied > lastApplied {
					g = FrameInterval // show a command's effect as soon as allowed
				}
			})
			at := lastStart.Add(g)
			if d := time.Until(at); d > 0 {
				if slot == nil || at.Before(slotAt) {
					slotTimer.Reset(d)
					slot, slotAt = slotTimer.C, at
				}
				continue
			}
			slot = nil
			slotTimer.Stop()
			if !sendFrame() {
				conn.Close()
				return
			}
		case <-slot:
			slot = nil
			if !sendFrame() {
				conn.Close()
				return
			}
		case <-ss.mc.out.notify: // message figure (mcfigure.go), latest wins
			if b, ok := ss.mc.out.take(); ok {
				if !write(outMsg{binary: true, data: b}) {
					conn.Close()
					return
				}
			}
		case <-ping.C:
			if err := conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(writeWait)); err != nil {
				ss.cancel(errorf("ping: %w", err))
				conn.Close()
				return
			}
		}
	}
}

// frameCostShare is the largest share of wall time spent building frames:
// a frame that took c to build is followed by a gap of at least c/share,
// so that streaming costs the optimizer at most about this share of a CPU.
const frameCostShare = 0.08

// frameGap returns the time from the start of one frame to the next: at
// least FrameInterval (60 per second), longer when frames are expensive
// (large data sets). The cost is smoothed over recent frames.
func frameGap(cost time.Duration, f *framer) time.Duration {
	if f.cost == 0 {
		f.cost = cost
	} else {
		f.cost = (3*f.cost + cost) / 4
	}
	return max(FrameInterval, time.Duration(float64(f.cost)/frameCostShare))
}

// Shutdown closes every session with a close frame (1001, going away) and
// waits for them to end or ctx to expire. New sessions are refused.
// http.Server.Shutdown does not close hijacked websocket connections;
// call both.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closing = true
	for ss := range s.sessions {
		ss.fail(closeGoingAway, "server is shutting down")
	}
	s.mu.Unlock()
	s.bgCancel() // background work: the robot baselines
	done := make(chan struct{})
	go func() { s.wg.Wait(); s.baselines.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return errorf("shutdown: %w", ctx.Err())
	}
}
