package stream

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"dgpviz/internal/admit"
	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
	"dgpviz/internal/share"
	"dgpviz/internal/train"
	"dgpviz/internal/view"
	"dgpviz/internal/wire"

	"github.com/gorilla/websocket"
)

// Websocket timing: the followers' (share.WriteWait, …) and queue sizes.
const (
	writeWait = share.WriteWait // time allowed to write one message
	closeWait = 2 * time.Second // time allowed for the close handshake
	outQueue  = 64              // queued replies and setups per session
	cmdQueue  = 16              // queued commands per session
	replyWait = 2 * time.Second // how long a full reply queue may stay full
)

// The keep-alive: variables so that a test can shorten them.
var (
	pongWait   = share.PongWait   // time allowed to read the next pong
	pingPeriod = share.PingPeriod // send pings this often; < pongWait
)

// hardReadLimit is the websocket read limit: a message larger than this
// closes the connection (status 1009). Messages between
// Limits.MaxCommandBytes and this are answered with an error and discarded.
const hardReadLimit = share.ReadLimit

// Close codes used by the server (RFC 6455 §7.4.1).
const (
	closePolicy    = websocket.ClosePolicyViolation         // 1008: bad configuration, client not reading
	closeTooBig    = websocket.CloseMessageTooBig           // 1009: message above the hard read limit
	closeGoingAway = websocket.CloseGoingAway               // 1001: server shutting down
	closeTryLater  = websocket.CloseTryAgainLater           // 1013: too many sessions
	closeBadData   = websocket.CloseInvalidFramePayloadData // 1007: text that is not UTF-8
)

// Options configure a Server.
type Options struct {
	Catalog  *dataset.Catalog
	Limits   admit.Limits
	Defaults admit.Config // configuration for parameters a client's URL leaves out
	// AllowedOrigins are host patterns (path.Match syntax, e.g.
	// "*.example.org" or "*") accepted in the Origin header besides the
	// request's own host. Empty: same-origin only.
	AllowedOrigins []string
	// Workers is each optimizer's evaluator workers (0: one per CPU).
	Workers int
	// Shards, when set, gives the evaluator of a session's fit of the
	// data d on worker processes (viz serve -workers-nats;
	// dgpviz/internal/shards), or nil to fit them in this process.
	Shards func(d *view.Data) train.Evaluator
	// BaselineIters is the number of L-BFGS iterations of the latent
	// explorer's one-layer GP baseline, fitted once per data set in the
	// background (0: the explorer's explorer.DefaultBaselineIters).
	BaselineIters int
	// ResumeGrace is how long a disconnected session can be resumed
	// (resume.go; 0: DefaultResumeGrace).
	ResumeGrace time.Duration
	Logger      *slog.Logger
	Share       share.ShareOptions // sharing beyond this server: NATS relays (dgpviz/internal/share)
	// PoolTurns is how many cores the pool for expensive work uses at
	// once (work.go; 0: DefaultPoolTurns, half the machine's).
	PoolTurns int
	// PoolShare is the share of each of its cores the pool uses (a turn
	// of d is followed by a rest of d·(1/PoolShare − 1); 0:
	// admit.DefaultPoolShare).
	PoolShare float64
	// TrustProxy: the server is behind a reverse proxy on this machine,
	// and a request from loopback is the client its X-Forwarded-For
	// header names (RequestClient).
	TrustProxy bool
	// ParkBurst and ParkEvery limit the parked state (uploads, forks) a
	// client makes: ParkBurst at once, one more every ParkEvery (0: 4 and
	// 15 s).
	ParkBurst int
	ParkEvery time.Duration
	// KeepFreedMemory leaves freed memory to Go's scavenger instead of
	// returning it when large reservations end (budget.go), for
	// measurements.
	KeepFreedMemory bool
}

// Server serves websocket sessions: one model and optimizer per connection.
type Server struct {
	cat     *dataset.Catalog
	limits  admit.Limits
	def     admit.Config
	workers int
	shards  func(d *view.Data) train.Evaluator // Options.Shards
	// env is what the views of all sessions share: work that outlives a
	// session (the explorer's baselines), under bg, which Shutdown cancels.
	env      *view.Env
	bg       context.Context    // background work (the views' baselines, load watch); ended by Shutdown
	grace    time.Duration      // how long a parked session waits to be resumed (resume.go)
	share    share.ShareOptions // share.go
	bgCancel context.CancelFunc
	// overloaded is set while the playing sessions' median frame rate is
	// below the minimum (load.go): new sessions are refused with 1013.
	overloaded atomic.Bool
	// playingNow is how many sessions played at the load watch's last
	// look (load.go): the pool's turns rest only then (admit.Pool.Rest).
	playingNow *atomic.Int64
	log        *slog.Logger
	origins    []string
	upgrader   websocket.Upgrader

	mu        sync.Mutex
	sessions  map[*session]struct{}
	followers int // connected followers (follow.go)
	// pool is the server's pool for expensive work (admit.Pool).
	pool        *admit.Pool
	trustProxy  bool
	commandRate *admit.ClientRate // commands to optimizers (admit.CommandBurst)
	// ledger holds the sessions', parked state's and uploads' reservations
	// of memory (budget.go), under mu; lot is the parked state, by resume
	// token (resume.go), and the uploads being read into it (upload.go).
	ledger  *admit.Ledger
	lot     *admit.Lot[*parked]
	closing bool
	wg      sync.WaitGroup
	nextID  atomic.Uint64
}

// NewServer returns a server; it checks the default configuration.
func NewServer(o Options) (*Server, error) {
	if o.Catalog == nil {
		var err error
		if o.Catalog, err = dataset.NewCatalog(nil, o.Limits.MaxRows); err != nil {
			return nil, err
		}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if err := o.Defaults.Validate(o.Limits, o.Catalog); err != nil {
		return nil, fmt.Errorf("default configuration: %w", err)
	}
	for _, p := range o.AllowedOrigins {
		if _, err := path.Match(p, ""); err != nil {
			return nil, fmt.Errorf("allowed origin pattern %q: %v", p, err)
		}
	}
	if err := o.Share.Check(); err != nil {
		return nil, err
	}
	if o.ResumeGrace <= 0 {
		o.ResumeGrace = DefaultResumeGrace
	}
	bg, cancel := context.WithCancel(context.Background())
	pl := admit.NewPool(o.PoolTurns, o.PoolShare)
	var playing atomic.Int64
	// The views' shared work (the explorer's baselines) is the server's
	// own job in the pool: it takes turns with the clients' work.
	serverJob, _ := pl.Admit(admit.ServerClient)
	s := &Server{bg: bg, grace: o.ResumeGrace, cat: o.Catalog, limits: o.Limits, def: o.Defaults, workers: o.Workers, shards: o.Shards, env: view.NewEnv(serverJob.Context(bg), o.BaselineIters),
		bgCancel: cancel, log: o.Logger, origins: o.AllowedOrigins, sessions: map[*session]struct{}{},
		pool: pl, playingNow: &playing, trustProxy: o.TrustProxy, commandRate: admit.NewClientRate(admit.CommandBurst, admit.CommandEvery)}
	s.ledger = admit.NewLedger(o.Limits, &s.mu, !o.KeepFreedMemory)
	s.lot = admit.NewLot(s.ledger, o.ResumeGrace, admit.NewClientRate(cmp.Or(o.ParkBurst, admit.ParkBurst), cmp.Or(o.ParkEvery, admit.ParkEvery)), o.Logger, s.unresumed)
	s.share = o.Share
	pl.Rest = func() bool { return playing.Load() > 0 }
	s.upgrader = websocket.Upgrader{ReadBufferSize: 4096, WriteBufferSize: 16384, CheckOrigin: s.checkOrigin}
	go s.watchLoad() // load.go; ends with the background context
	return s, nil
}

// Catalog returns the server's data sets.
func (s *Server) Catalog() *dataset.Catalog { return s.cat }

// Defaults returns the configuration used for absent URL parameters.
func (s *Server) Defaults() admit.Config { return s.def }

// Limits returns the server's limits.
func (s *Server) Limits() admit.Limits { return s.limits }

// checkOrigin accepts requests without an Origin header (not from a
// browser), same-origin requests, and origins matching AllowedOrigins.
func (s *Server) checkOrigin(r *http.Request) bool { return share.OriginAllowed(r, s.origins) }

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
// configuration comes from the URL query (see admit.ParseQuery) until the socket
// closes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if key := r.URL.Query().Get("follow"); key != "" {
		s.serveFollower(w, r, key) // follow.go
		return
	}
	conn, err := s.upgrader.Upgrade(w, r, nil)
	if err != nil {
		s.log.Info("websocket upgrade refused", "remote", r.RemoteAddr, "origin", r.Header.Get("Origin"), "err", err)
		return // the upgrader has answered
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	ss := &session{
		id: s.nextID.Add(1), srv: s, ctx: ctx, cancel: cancel, downloadKey: newResumeToken(),
		cmds: make(chan Command, cmdQueue), answers: make(chan Command, answerQueue), readerDone: make(chan struct{}), out: make(chan outMsg, outQueue),
		frames: share.NewMailbox[*publication](), viewOut: share.NewOutbox(), gate: share.NewDrawGate(),
	}
	ss.client = admit.RequestClient(r, s.trustProxy)
	ss.log = s.log.With("session", ss.id, "remote", r.RemoteAddr)

	refuse := func(code int, text string) {
		ss.log.Info("session refused", "reason", text)
		conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, wire.Cut(text, 120)), time.Now().Add(writeWait))
		conn.Close()
		cancel(nil)
	}
	if code, text := s.admitSession(ss); text != "" {
		refuse(code, text)
		return
	}
	defer s.leave(ss)

	cfg, resumed := s.greet(ss, r)
	// The reader starts before the model is built, so that a client that
	// leaves while a preset's restarts run (seconds for an autoencoder of
	// images) ends the build with its session instead of paying for all
	// of it. The writer pings from the start, so that a build longer than
	// pongWait keeps its connection, and writes the rest once it is built:
	// the hello, the setup and the first frame go together.
	var wg sync.WaitGroup
	wg.Add(3)
	built := make(chan struct{})
	go func() { defer wg.Done(); ss.writer(conn, built) }()
	go func() { defer wg.Done(); ss.answerLoop() }()
	go func() {
		defer wg.Done()
		ok := ss.ctx.Err() == nil && ss.start(cfg, resumed)
		close(built)
		if ok {
			ss.run()
		}
	}()
	ss.reader(conn)
	wg.Wait()
	conn.Close()
	st := ss.stats()
	ss.log.Info("session ended", "cause", context.Cause(ss.ctx), "iterations", st.Iterations, "frames", st.Frames)
}

// admitSession adds ss to the server's sessions, or returns the close
// code and reason that refuse it: the server is shutting down, at its
// limits, or overloaded (load.go).
func (s *Server) admitSession(ss *session) (code int, text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closing:
		return closeGoingAway, "server is shutting down"
	case len(s.sessions) >= s.limits.MaxSessions:
		return closeTryLater, "too many sessions (limit " + strconv.Itoa(s.limits.MaxSessions) + "); close another tab"
	case s.overloaded.Load():
		return closeTryLater, overloadText()
	case s.limits.MaxSessionsPerClient > 0 && s.clientSessions(ss.client) >= s.limits.MaxSessionsPerClient:
		return closeTryLater, "too many sessions from your address (limit " + strconv.Itoa(s.limits.MaxSessionsPerClient) + "); close another tab"
	}
	s.sessions[ss] = struct{}{}
	s.wg.Add(1)
	return 0, ""
}

// leave ends ss's place in the server: it is parked for resuming, keeping
// its reservation and its share (resume.go), or its reservation and
// private data set go.
func (s *Server) leave(ss *session) {
	parked := s.park(ss) // keeps its reservation and its share while parked (resume.go)
	if !parked || ss.pageLeft.Load() {
		ss.endShare()
	}
	s.mu.Lock()
	delete(s.sessions, ss)
	if !parked {
		s.ledger.Release(ss)
		if ss.private != "" {
			s.cat.RemovePrivate(ss.private)
		}
	}
	s.mu.Unlock()
	s.wg.Done()
}

// greet sends ss its hello — the limits, the data sets, the keys that
// share, resume and download it — with the configuration r's link asks
// for (or the parked state's it resumes, which it takes), and returns
// them. A configuration that is refused ends the session with an error.
func (s *Server) greet(ss *session, r *http.Request) (admit.Config, *parked) {
	query := r.URL.Query()
	var resumed *parked
	if token := query.Get("resume"); token != "" {
		resumed = s.unpark(token)
		query.Del("resume")
	}
	hub := s.sessionHub(resumed) // a resumed session keeps its followers (resume.go)
	s.mu.Lock()
	ss.hub = hub
	s.mu.Unlock()
	cfg, err := admit.ParseQuery(query, s.def)
	if err == nil {
		cfg = admit.LinkPreset(cfg, query, s.def, s.limits, s.cat)
	}
	if resumed != nil {
		cfg, err = resumed.cfg, nil
	}
	if err == nil {
		err = cfg.Validate(s.limits, s.cat)
	}
	hello := reply{Type: "hello", Session: ss.id, Limits: &s.limits, Sets: s.cat.Info(), Groups: engine.GroupNames(), MaxHistory: train.MaxHistory}
	if resumed != nil && resumed.private != "" {
		if ds := s.cat.Get(resumed.private); ds != nil {
			hello.Sets = append(hello.Sets, dataset.EntryOf(ds)) // a loaded model's or an upload's own data
		}
	}
	hello.FigureKey = ss.downloadKey // downloads of this session's figures (published.go)
	ss.resumeToken = newResumeToken()
	hello.Resume = ss.resumeToken
	hello.ShareKey = ss.hub.Key()
	hello.ShareURL = s.share.FollowURL
	if err != nil {
		ss.send(outMsg{data: hello.bytes()})
		ss.reply(reply{Type: "error", Op: "connect", Error: err.Error()})
		ss.fail(closePolicy, err.Error())
	} else {
		hello.Config = &cfg
		ss.send(outMsg{data: hello.bytes()})
		if r.URL.Query().Get("resume") != "" && resumed == nil {
			ss.reply(reply{Type: "error", Op: "resume", Error: "the session could not be resumed (it ends " + s.grace.String() + " after a disconnect, and when the server restarts): a new one starts"})
		}
	}
	return cfg, resumed
}

// start builds the session's first model (or adopts the resumed state)
// and publishes it, on the optimizer goroutine; false when it could not.
func (ss *session) start(cfg admit.Config, resumed *parked) (ok bool) {
	defer ss.recoverPanic("optimizer")
	var err error
	if resumed != nil {
		err = ss.adopt(resumed)
	} else {
		err = ss.build(cfg, true)
	}
	switch {
	case ss.ctx.Err() != nil: // gone while it was built
		ss.log.Info("session ended while its model was built", "cause", context.Cause(ss.ctx))
		return false
	case errors.Is(err, admit.ErrBusy):
		ss.reply(reply{Type: "error", Op: "connect", Error: err.Error()})
		ss.fail(closeTryLater, busyCloseText)
		return false
	case errors.Is(err, admit.ErrClientBusy):
		ss.reply(reply{Type: "error", Op: "connect", Error: err.Error()})
		ss.fail(closeTryLater, admit.ErrClientBusy.Error())
		return false
	case err != nil:
		ss.reply(reply{Type: "error", Op: "connect", Error: err.Error()})
		ss.fail(closePolicy, err.Error())
		return false
	}
	ss.opt.running = cfg.Play
	ss.publish()
	ss.log.Info("session started", "config", cfg.Query().Encode())
	return true
}

// clientSessions counts the open sessions of client. s.mu is held.
func (s *Server) clientSessions(client string) int {
	n := 0
	for ss := range s.sessions {
		if ss.client == client {
			n++
		}
	}
	return n
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
	for _, p := range s.lot.Close() { // nothing will resume them now
		if p.hub != nil {
			p.hub.End("server is shutting down")
		}
		if p.private != "" {
			s.cat.RemovePrivate(p.private)
		}
	}
	s.mu.Unlock()
	s.bgCancel() // background work: the views' baselines
	done := make(chan struct{})
	go func() { s.wg.Wait(); s.env.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("sessions still running: %w", ctx.Err())
	}
}
