// Package relay takes a lecture past one server: a presenter's server
// publishes its shared sessions to NATS (Publisher, viz serve -nats), and
// relays (Server, viz relay), which run no model and keep no state of
// their own, serve the page in follower mode to as many followers as they
// can carry, each following session fanned out by a share.Hub exactly
// as the presenter's server fans out its own followers (the same
// latest-wins mailboxes, the same pacing by each page's "drawn").
//
// A relay subscribes to a session's stream when its first follower of it
// arrives, asks the presenter's server for the session's latest state
// (setup, bound history, presentation state, frame) by request/reply, and
// unsubscribes when its last follower leaves. Relays announce their pages
// to each other, so that a page whose relay fails can try another; they
// sit as well behind an ordinary load balancer. Everything a relay reads
// from NATS is checked before a page gets it (wire.go, Hub.Take,
// Hub.Restore). See docs/scaling.md.
package relay

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"time"

	"dgpviz/internal/admit"
	"dgpviz/internal/dataset"
	"dgpviz/internal/share"
	"dgpviz/internal/wire"
	"dgpviz/web"

	"github.com/gorilla/websocket"
	"github.com/nats-io/nats.go"
)

// Defaults.
const (
	DefaultMaxFollowers = 2000 // followers of one relay, all sessions together
	DefaultMaxSessions  = 64   // sessions one relay follows at once
	// JoinTimeout is how long a relay's first follower of a session waits
	// for the presenter's server's snapshot.
	JoinTimeout = 5 * time.Second
	// GoneAfter is how long the presenter's server may be silent and
	// answer nothing (NATS: "no responders") before the relay tells its
	// followers that the session has ended; shorter outages (NATS
	// restarting, the presenter's server reconnecting) are a pause.
	GoneAfter        = 15 * time.Second
	askTimeout       = 15 * time.Second
	announceEvery    = 2 * time.Second // relays' announcements and follower counts
	closeRelayLeaves = websocket.CloseServiceRestart
)

// Options configure New.
type Options struct {
	NATS         *nats.Conn
	MaxFollowers int // 0: DefaultMaxFollowers
	MaxSessions  int // 0: DefaultMaxSessions
	// PublicURL is this relay's page as followers reach it, announced to
	// the other relays: a page whose relay fails tries another. "": not
	// announced (behind a load balancer, whose one address the page
	// reconnects to).
	PublicURL string
	// AllowedOrigins are host patterns accepted in the websocket's Origin
	// header besides the request's own host (as viz serve's).
	AllowedOrigins []string
	Logger         *slog.Logger
}

// Server is a relay: it serves followers' websockets (ServeHTTP) and the
// follower's page (Handler).
type Server struct {
	o        Options
	nc       *nats.Conn
	log      *slog.Logger
	id       string // names this relay in follower counts
	upgrader websocket.Upgrader
	limits   admit.Limits
	cat      *dataset.Catalog // the page's (web.Backend): the default data set's name

	mu        sync.Mutex
	feeds     map[string]*feed // followed sessions by share key
	followers int
	closing   bool
	stopping  chan struct{} // closed by Shutdown: followers are closed with 1012
	conns     sync.WaitGroup
	bg        sync.WaitGroup
	peers     map[string]time.Time // other relays' pages, when last announced
	announce  *nats.Subscription
}

// New returns a relay on o.NATS.
func New(o Options) (*Server, error) {
	if o.NATS == nil {
		return nil, errors.New("a relay needs a NATS connection")
	}
	if o.MaxFollowers <= 0 {
		o.MaxFollowers = DefaultMaxFollowers
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = DefaultMaxSessions
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.PublicURL != "" {
		if err := share.CheckPageURL(o.PublicURL); err != nil {
			return nil, errors.New("public URL: " + err.Error())
		}
	}
	var id [8]byte
	rand.Read(id[:])
	s := &Server{o: o, nc: o.NATS, log: o.Logger, id: hex.EncodeToString(id[:]), feeds: map[string]*feed{}, stopping: make(chan struct{}), peers: map[string]time.Time{}}
	s.limits = admit.DefaultLimits()
	s.limits.MaxFollowers = o.MaxFollowers
	cat, err := dataset.NewCatalog(nil, s.limits.MaxRows)
	if err != nil {
		return nil, err
	}
	s.cat = cat
	s.upgrader = websocket.Upgrader{ReadBufferSize: 4096, WriteBufferSize: 16384, CheckOrigin: func(r *http.Request) bool { return share.OriginAllowed(r, o.AllowedOrigins) }}
	// After NATS comes back, every followed session catches up from a
	// snapshot: what the presenter's server published meanwhile is lost.
	s.nc.SetReconnectHandler(func(*nats.Conn) {
		s.log.Info("NATS: reconnected; catching up", "sessions", s.Sessions())
		s.mu.Lock()
		for _, f := range s.feeds {
			select {
			case f.rejoin <- struct{}{}:
			default:
			}
		}
		s.mu.Unlock()
	})
	s.nc.SetDisconnectErrHandler(func(_ *nats.Conn, err error) { s.log.Warn("NATS: disconnected; followers see a pause", "err", err) })
	sub, err := s.nc.Subscribe(subjectRelays, func(m *nats.Msg) {
		if u, err := parseAnnouncement(m.Data); err == nil && u != s.o.PublicURL {
			s.mu.Lock()
			if _, ok := s.peers[u]; ok || len(s.peers) < 4*maxPeers {
				s.peers[u] = time.Now()
			}
			s.mu.Unlock()
		}
	})
	if err != nil {
		return nil, err
	}
	s.announce = sub
	if o.PublicURL != "" {
		s.bg.Add(1)
		go s.announceLoop()
	}
	return s, nil
}

// announceLoop announces this relay's page until Shutdown.
func (s *Server) announceLoop() {
	defer s.bg.Done()
	b, _ := json.Marshal(announcement{URL: s.o.PublicURL})
	t := time.NewTicker(announceEvery)
	defer t.Stop()
	for {
		s.nc.Publish(subjectRelays, b)
		select {
		case <-s.stopping:
			return
		case <-t.C:
		}
	}
}

// relays are this relay's page and the others announced lately, for a
// page to try when its relay fails.
func (s *Server) relays() []string {
	if s.o.PublicURL == "" {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []string{s.o.PublicURL}
	for u, at := range s.peers {
		if time.Since(at) > 3*announceEvery {
			delete(s.peers, u)
			continue
		}
		out = append(out, u)
	}
	sort.Strings(out[1:])
	return out[:min(len(out), maxPeers)]
}

// Sessions returns how many sessions the relay follows (is subscribed to).
func (s *Server) Sessions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.feeds)
}

// Followers returns the relay's followers.
func (s *Server) Followers() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.followers
}

// Defaults, Limits and Catalog serve the page (web.Backend): a relay's
// page is the follower's.
func (s *Server) Defaults() admit.Config    { return admit.DefaultConfig() }
func (s *Server) Limits() admit.Limits      { return s.limits }
func (s *Server) Catalog() *dataset.Catalog { return s.cat }

// Handler returns the relay's site: the page (only with ?follow=KEY: a
// relay has no sessions of its own), its assets, the websocket and
// /healthz.
func (s *Server) Handler() http.Handler {
	site := web.New(s, s, s.log)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" && r.URL.Query().Get("follow") == "" {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Header().Set("X-Content-Type-Options", "nosniff")
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte("This is a dgpviz relay: it serves followers of shared sessions. Open the presenter's Share live link (/?follow=KEY).\n"))
			return
		}
		site.ServeHTTP(w, r)
	})
}

// hello is a relay's hello to a follower.
type hello struct {
	V        int             `json:"v"`
	Type     string          `json:"type"`
	Follower bool            `json:"follower"`
	Relay    bool            `json:"relay"`
	Config   json.RawMessage `json:"config,omitempty"`
	// MaxHistory is the bound history's cap, which the page keeps to.
	MaxHistory int `json:"max_history"`
	// Relays are relays' pages a page may try when this one fails.
	Relays       []string `json:"relays,omitempty"`
	PresenterURL string   `json:"presenter_url,omitempty"`
}

var (
	errNoSuchShare = errors.New(share.NoSuchShare)
	errUnreachable = errors.New("the relay cannot reach the presenter's server now; try again later")
	errClosing     = errors.New("relay is shutting down")
)

// ServeHTTP serves a follower's websocket, /ws?follow=KEY.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key := r.URL.Query().Get("follow")
	conn, err := s.upgrader.Upgrade(w, r, nil)
	if err != nil {
		s.log.Info("websocket upgrade refused", "remote", r.RemoteAddr, "origin", r.Header.Get("Origin"), "err", err)
		return
	}
	defer conn.Close()
	if !share.ValidToken(key) {
		share.CloseWith(conn, websocket.ClosePolicyViolation, "this is a relay: it serves followers of a shared session (/?follow=KEY)")
		return
	}
	s.mu.Lock()
	closing, full := s.closing, s.followers >= s.o.MaxFollowers
	if !closing && !full {
		s.followers++
		s.conns.Add(1)
	}
	s.mu.Unlock()
	switch {
	case closing:
		share.CloseWith(conn, closeRelayLeaves, errClosing.Error())
		return
	case full:
		share.CloseWith(conn, websocket.CloseTryAgainLater, "too many followers on this relay (limit "+strconv.Itoa(s.o.MaxFollowers)+")")
		return
	}
	defer func() {
		s.mu.Lock()
		s.followers--
		s.mu.Unlock()
		s.conns.Done()
	}()
	f, err := s.acquire(key)
	if err != nil {
		code := websocket.CloseTryAgainLater
		switch {
		case errors.Is(err, errNoSuchShare):
			code = websocket.ClosePolicyViolation
		case errors.Is(err, errClosing):
			code = closeRelayLeaves
		}
		share.CloseWith(conn, code, err.Error())
		return
	}
	defer s.release(f)
	info := f.hub.Info()
	hb, _ := json.Marshal(hello{V: wire.Version, Type: "hello", Follower: true, Relay: true, Config: f.hub.Config(), MaxHistory: share.MaxHistory, Relays: s.relays(), PresenterURL: info.PresenterURL})
	f.hub.Serve(conn, hb, share.FollowerOptions{
		MaxCommandBytes: s.limits.MaxCommandBytes,
		Ask:             func(op string, raw []byte) ([]byte, bool) { return s.ask(key, op, raw) },
		Stop:            s.stopping, StopCode: closeRelayLeaves, StopText: "relay is shutting down: reconnecting",
	})
}

// ask forwards a follower's command (a fork, a question to the view such
// as decode, or anything else, which the presenter's server refuses as
// read-only) to the presenter's server.
func (s *Server) ask(key, op string, raw []byte) ([]byte, bool) {
	id, _ := commandOp(raw)
	m, err := s.nc.Request(sessionSubject(key, "ask"), raw, askTimeout)
	switch {
	case errors.Is(err, nats.ErrNoResponders):
		return share.ErrorReply(id, wire.Truncate(op, 40), "the presenter's session has ended"), false
	case err != nil:
		return share.ErrorReply(id, wire.Truncate(op, 40), "the presenter's server did not answer; try again"), false
	}
	b, binary, err := answer(m)
	if err != nil {
		s.log.Warn("a presenter's answer was refused", "key", key, "err", err)
		return share.ErrorReply(id, wire.Truncate(op, 40), "the presenter's server sent an answer the relay could not check"), false
	}
	if op == "fork" && !binary && !bytes.Contains(b, []byte(`"url":`)) && bytes.Contains(b, []byte(`"resume":`)) {
		// A fork the follower cannot open: its page is not this relay's.
		return share.ErrorReply(id, wire.Truncate(op, 40), "the presenter's server has no public address to fork on (viz serve -public-url)"), false
	}
	return b, binary
}

// Shutdown closes every follower with 1012 (service restart: their pages
// try another relay), stops following, and waits for the connections to
// end or ctx.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if !s.closing {
		s.closing = true
		close(s.stopping)
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() { s.conns.Wait(); s.bg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		return ctx.Err()
	}
	s.announce.Unsubscribe()
	return nil
}

// acquire returns the feed of key, following it first if this is its
// first follower, once it has the presenter's snapshot.
func (s *Server) acquire(key string) (*feed, error) {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return nil, errClosing
	}
	f := s.feeds[key]
	if f == nil {
		if len(s.feeds) >= s.o.MaxSessions {
			s.mu.Unlock()
			return nil, errors.New("this relay follows too many sessions (limit " + strconv.Itoa(s.o.MaxSessions) + "); try again later")
		}
		f = &feed{s: s, key: key, hub: share.NewHub(key), ready: make(chan struct{}), stop: make(chan struct{}), rejoin: make(chan struct{}, 1)}
		s.feeds[key] = f
		s.bg.Add(1)
		go f.run()
	}
	f.n++
	s.mu.Unlock()
	select {
	case <-f.ready:
	case <-s.stopping:
		s.release(f)
		return nil, errClosing
	}
	if f.err != nil {
		s.release(f)
		return nil, f.err
	}
	return f, nil
}

// release ends a follower's use of f: the last one unsubscribes.
func (s *Server) release(f *feed) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f.n--; f.n == 0 {
		if s.feeds[f.key] == f {
			delete(s.feeds, f.key)
		}
		f.stopOnce.Do(func() { close(f.stop) })
	}
}

// drop forgets f (its session ended or could not be followed): the next
// follower of its key asks afresh.
func (s *Server) drop(f *feed) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.feeds[f.key] == f {
		delete(s.feeds, f.key)
	}
}

// feed is one followed session: its NATS subscriptions, run by one
// goroutine, and the hub its followers are served from.
type feed struct {
	s        *Server
	key      string
	hub      *share.Hub
	n        int           // followers (Server.mu)
	ready    chan struct{} // closed once the first snapshot is in, or err set
	err      error
	stop     chan struct{} // closed when the last follower leaves
	stopOnce sync.Once
	rejoin   chan struct{} // NATS reconnected: catch up from a snapshot
}

// run follows the session until the last follower leaves or it ends.
func (f *feed) run() {
	s := f.s
	defer s.bg.Done()
	readyDone := false
	fail := func(err error) {
		s.drop(f)
		if !readyDone {
			f.err, readyDone = err, true
			close(f.ready)
		}
		f.hub.End("the presenter's session has ended")
	}
	msgs := make(chan *nats.Msg, 4096)
	live, err := s.nc.ChanSubscribe(streamSubject(f.key, "*"), msgs)
	if err != nil {
		fail(errUnreachable)
		return
	}
	defer live.Unsubscribe()
	inbox := s.nc.NewRespInbox()
	replies, err := s.nc.ChanSubscribe(inbox, msgs)
	if err != nil {
		fail(errUnreachable)
		return
	}
	defer replies.Unsubscribe()

	var (
		snap      share.Catchup
		joining   bool
		joinAt    time.Time
		lastHeard = time.Now()
		goneSince time.Time // the presenter's server first answered nothing
		retryAt   time.Time // a catch-up that failed is tried again then
		aliveDone = make(chan error, 1)
		asking    bool
		lastWatch time.Time
		badLogged time.Time
	)
	join := func() {
		snap, joining, joinAt = share.Catchup{}, true, time.Now()
		if err := s.nc.PublishRequest(sessionSubject(f.key, "join"), inbox, nil); err != nil {
			s.log.Debug("NATS join", "err", err)
		}
	}
	gone := func() {
		if goneSince.IsZero() {
			goneSince = time.Now()
		}
	}
	bad := func(what string, err error) {
		if time.Since(badLogged) > 10*time.Second { // trust nothing, and do not let it fill the log
			badLogged = time.Now()
			s.log.Warn("refused a message from NATS", "key", f.key, "what", what, "err", err)
		}
	}
	count := func(n int) {
		b, _ := json.Marshal(watching{Relay: s.id, Followers: n})
		s.nc.Publish(sessionSubject(f.key, "watching"), b)
		lastWatch = time.Now()
	}
	join()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-f.stop:
			count(0)
			return
		case <-f.rejoin:
			join()
		case m := <-msgs:
			if m.Subject == inbox {
				if m.Header.Get(hdrStatus) == "503" { // no responders: no such session (now)
					joining = false
					if !readyDone {
						fail(errNoSuchShare)
						return
					}
					gone() // or not yet back after NATS restarted: catch up later
					retryAt = time.Now().Add(time.Second)
					continue
				}
				done, err := catchupPart(&snap, m)
				if err != nil {
					bad("snapshot", err)
					continue
				}
				if !done || !joining {
					continue
				}
				joining = false
				if err := f.hub.Restore(snap); err != nil {
					bad("snapshot", err)
					if !readyDone {
						fail(errUnreachable)
						return
					}
					continue
				}
				lastHeard, goneSince, retryAt = time.Now(), time.Time{}, time.Time{}
				if !readyDone {
					readyDone = true
					close(f.ready)
				}
				continue
			}
			lastHeard, goneSince = time.Now(), time.Time{}
			switch kind := streamKind(m.Subject, f.key); kind {
			case "end":
				s.drop(f)
				f.hub.End(endReason(m.Data))
				return
			default:
				if err := f.hub.Take(kind, m.Data); err != nil {
					bad(kind, err)
				}
			}
		case err := <-aliveDone:
			asking = false
			switch {
			case errors.Is(err, nats.ErrNoResponders):
				gone()
			case err == nil:
				lastHeard, goneSince = time.Now(), time.Time{}
			}
		case now := <-tick.C:
			if joining && now.Sub(joinAt) > JoinTimeout {
				joining = false
				if !readyDone {
					fail(errUnreachable)
					return
				}
				retryAt = now
			}
			if !joining && !retryAt.IsZero() && now.After(retryAt) {
				join()
			}
			if !goneSince.IsZero() && now.Sub(goneSince) > GoneAfter {
				fail(errNoSuchShare)
				return
			}
			if readyDone && !asking && now.Sub(lastHeard) > announceEvery {
				asking = true
				go func() {
					_, err := s.nc.Request(sessionSubject(f.key, "alive"), nil, announceEvery)
					aliveDone <- err
				}()
			}
			if readyDone && now.Sub(lastWatch) >= announceEvery {
				count(f.hub.Followers())
			}
		}
	}
}
