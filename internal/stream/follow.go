package stream

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"dgpviz/internal/engine"
	"dgpviz/internal/view"

	"github.com/gorilla/websocket"
)

// Followers: a presenter's session shared read-only. The presenter's page
// shows a "share live" link, /?follow=KEY; a follower's socket
// (/ws?follow=KEY) gets the presenter's setups and frames, encoded once
// by the presenter's writer and fanned out by a Hub: each follower has a
// one-slot latest-wins mailbox per kind, so a slow follower gets the
// latest frame and never holds up the presenter or the others. A follower
// who joins late gets the latest setup, the session's bound history
// (history.go) and the presenter's presentation state (present.go) at
// once. Followers run no model; the commands they may send are "fork",
// which parks a session of their own from the presenter's current state
// (resume.go) and answers with its resume token, and a question to the
// presenter's view such as "decode".
//
// A Hub is a Feed: the presenter's writer feeds it, and with viz serve
// -nats a second Feed publishes the same stream to NATS, where relays
// (internal/relay) feed Hubs of their own and serve their followers with
// the same code (Hub.Serve).

// DefaultMaxFollowers bounds the followers of all sessions together.
const DefaultMaxFollowers = 250

// A Feed takes a shared session's stream as the presenter's writer makes
// it: the in-process Hub, which fans it out to this server's followers,
// and, beyond the process, a Publisher's feed (share.go).
type Feed interface {
	Setup(b []byte)             // a setup message, binary
	Frame(b []byte, seq uint64) // a frame, binary, and its "seq"
	Presentation(b []byte)      // the presentation state, a text message
	End(reason string)          // the session has ended
}

// Hub fans one shared session's stream out to its followers.
type Hub struct {
	key string // the share key (hello's "share_key")

	mu        sync.Mutex
	followers map[*follower]struct{}
	setup     []byte // the latest setup, presentation and frame, for a follower who joins
	setupHead feedHeader
	present   []byte
	frame     seqFrame
	views     map[string][]byte      // the latest view message of each type (hubview.go)
	hist      history                // the bound history (history.go)
	histMsg   []byte                 // its encoding, until it changes
	state     *forkState             // what a fork starts from (the presenter's server only)
	info      ShareInfo              // what a relay knows of the presenter (Restore)
	out       Feed                   // the stream beyond this process, or nil
	remote    map[string]remoteCount // relays' followers (share.go)
	ended     bool
	endReason string
	done      chan struct{} // closed by End
	// recount wakes the presenter's session when its followers come or
	// go, so that "watching" is right at once, not at the next frame (a
	// paused session sends none).
	recount chan struct{}
}

// forkState is the presenter's state as last published: its
// configuration, and the publication (the model's immutable copy, its
// data and view).
type forkState struct {
	cfg Config
	pub *publication
}

type follower struct {
	setup   *mailbox[[]byte]
	history *mailbox[[]byte]
	present *mailbox[[]byte]
	views   *outbox
	frame   *mailbox[seqFrame]
}

// seqFrame is an encoded frame and its sequence number (the follower's
// drawGate compares it with what the page has drawn).
type seqFrame struct {
	b   []byte
	seq uint64
}

// NewHub returns the hub of the session shared under key.
func NewHub(key string) *Hub {
	return &Hub{key: key, followers: map[*follower]struct{}{}, done: make(chan struct{}), recount: make(chan struct{}, 1)}
}

// counted tells the session that the number of followers changed.
func (h *Hub) counted() {
	select {
	case h.recount <- struct{}{}:
	default: // one wake-up is pending
	}
}

func newHub() *Hub { return NewHub(newResumeToken()) }

// Key returns the share key.
func (h *Hub) Key() string { return h.key }

// Done is closed when the session has ended.
func (h *Hub) Done() <-chan struct{} { return h.done }

// Setup fans a setup message out. A new data set (not an edit of the
// points) starts the bound history again, as the page does.
func (h *Hub) Setup(b []byte) {
	hd, err := parseFeedHeader(b, "setup")
	if err != nil {
		return // the presenter's own setups always parse; a relay checked it
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ended {
		return
	}
	h.setSetup(b, hd)
	for f := range h.followers {
		f.setup.put(b)
	}
	if h.out != nil {
		h.out.Setup(b)
	}
}

// setSetup records setup b. h.mu is held.
func (h *Hub) setSetup(b []byte, hd feedHeader) {
	prev := h.setupHead
	// The same data again (a resumed session) or an edit of its points
	// keeps the history.
	edit := h.setup != nil && (hd.DataID == prev.DataID && hd.Name == prev.Name || hd.Name == prev.Name && (hd.Edited || prev.Edited))
	if !edit {
		h.hist.clear()
		clear(h.views) // of the data before
	}
	h.hist.dataID = hd.DataID
	h.histMsg = nil
	h.setup, h.setupHead = b, hd
}

// Frame fans a frame out and adds its bound to the history. A frame older
// than the latest (a relay's late copy) is dropped.
func (h *Hub) Frame(b []byte, seq uint64) {
	hd, err := parseFeedHeader(b, "frame")
	if err != nil || hd.Seq != seq {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ended || (h.frame.b != nil && seq <= h.frame.seq) { // seq grows with every frame of a session
		return
	}
	h.frame = seqFrame{b, seq}
	if hd.DataID == h.hist.dataID && h.hist.add(hd) {
		h.histMsg = nil
	}
	for f := range h.followers {
		f.frame.put(h.frame)
	}
	if h.out != nil {
		h.out.Frame(b, seq)
	}
}

// Presentation fans the presenter's presentation state out (present.go).
func (h *Hub) Presentation(b []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ended {
		return
	}
	h.present = b
	for f := range h.followers {
		f.present.put(b)
	}
	if h.out != nil {
		h.out.Presentation(b)
	}
}

// End ends the session: its followers are closed with 1001 and reason,
// and followers who come later are refused.
func (h *Hub) End(reason string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ended {
		return
	}
	h.ended, h.endReason = true, reason
	close(h.done)
	if h.out != nil {
		h.out.End(reason)
	}
}

// publishSetup and publishFrame are the presenter's writer's names for
// Setup and Frame.
func (h *Hub) publishSetup(b []byte)             { h.Setup(b) }
func (h *Hub) publishFrame(b []byte, seq uint64) { h.Frame(b, seq) }

func (h *Hub) publishState(st *forkState) {
	h.mu.Lock()
	h.state = st
	h.mu.Unlock()
}

// count is the number of followers, relays' included (shown to the
// presenter in frames).
func (h *Hub) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := len(h.followers)
	for r, c := range h.remote {
		if time.Since(c.at) > watchingFor {
			delete(h.remote, r)
			continue
		}
		n += c.n
	}
	return n
}

// Followers returns the number of followers of this hub (not relays').
func (h *Hub) Followers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.followers)
}

// remoteCount is a relay's follower count and when it said so.
type remoteCount struct {
	n  int
	at time.Time
}

// watchingFor is how long a relay's follower count stands: relays repeat
// it every few seconds (internal/relay), so a relay that died is not
// counted for long.
const watchingFor = 10 * time.Second

func (h *Hub) watching(relay string, n int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.remote == nil {
		h.remote = map[string]remoteCount{}
	}
	if old := h.remote[relay].n; old != n {
		defer h.counted()
	}
	if n == 0 {
		delete(h.remote, relay)
		return
	}
	if _, known := h.remote[relay]; known || len(h.remote) < 1024 {
		h.remote[relay] = remoteCount{n, time.Now()}
	}
}

// historyMsg returns the encoded bound history, nil when there is none.
// h.mu is held.
func (h *Hub) historyMsg() []byte {
	if h.histMsg == nil && h.hist.n() > 0 {
		h.histMsg = h.hist.encode()
	}
	return h.histMsg
}

// join adds a follower with the latest setup, history, presentation and
// frame already queued; nil once the session has ended.
func (h *Hub) join() *follower {
	f := &follower{setup: newMailbox[[]byte](), history: newMailbox[[]byte](), present: newMailbox[[]byte](), views: newOutbox(), frame: newMailbox[seqFrame]()}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ended {
		return nil
	}
	if h.setup != nil {
		f.setup.put(h.setup)
	}
	if b := h.historyMsg(); b != nil {
		f.history.put(b)
	}
	if h.present != nil {
		f.present.put(h.present)
	}
	for typ, b := range h.views {
		f.views.put(typ, b)
	}
	if h.frame.b != nil {
		f.frame.put(h.frame)
	}
	h.followers[f] = struct{}{}
	h.counted()
	return f
}

func (h *Hub) leave(f *follower) {
	h.mu.Lock()
	delete(h.followers, f)
	h.mu.Unlock()
	h.counted()
}

// Config returns the presenter's configuration as last published (nil:
// not known yet).
func (h *Hub) Config() *Config {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.state != nil {
		cfg := h.state.cfg
		return &cfg
	}
	return h.info.Config
}

// Info returns what a relay knows of the presenter (Restore).
func (h *Hub) Info() ShareInfo {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.info
}

// hubOf returns the live session shared under key (nil: none, or it has
// ended and its connection is still closing).
func (s *Server) hubOf(key string) *Hub {
	s.mu.Lock()
	defer s.mu.Unlock()
	for ss := range s.sessions {
		if ss.hub != nil && ss.hub.key == key {
			select {
			case <-ss.hub.done:
				return nil
			default:
				return ss.hub
			}
		}
	}
	return s.parkedHub(key) // a presenter reconnecting
}

// newHub makes a session's hub, published beyond the process when the
// server has a Publisher; it ends with the session, or when the session's
// parked state is forgotten (resume.go).
func (s *Server) newHub() *Hub {
	h := newHub()
	if p := s.share.Publisher; p != nil {
		h.out = p.Share(h.key, &sharedSession{srv: s, hub: h})
	}
	return h
}

// serveFollower runs a follower's connection until it closes or the
// presenter's session ends.
func (s *Server) serveFollower(w http.ResponseWriter, r *http.Request, key string) {
	conn, err := s.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer conn.Close()
	client := RequestClient(r, s.trustProxy)
	h := s.hubOf(key)
	s.mu.Lock()
	full := s.followers >= s.limits.MaxFollowers
	if h != nil && !full && !s.closing {
		s.followers++
	}
	closing := s.closing
	s.mu.Unlock()
	switch {
	case closing:
		CloseWith(conn, closeGoingAway, "server is shutting down")
		return
	case h == nil:
		CloseWith(conn, closePolicy, NoSuchShare)
		return
	case full:
		CloseWith(conn, closeTryLater, "too many followers (limit "+strconv.Itoa(s.limits.MaxFollowers)+")")
		return
	}
	defer func() {
		s.mu.Lock()
		s.followers--
		s.mu.Unlock()
	}()
	hello := reply{Type: "hello", Follower: true, Limits: &s.limits, Sets: s.cat.Info(), Groups: engine.GroupNames(), Config: h.Config()}
	h.Serve(conn, hello.bytes(), FollowerOptions{
		MaxCommandBytes: s.limits.MaxCommandBytes,
		Ask:             func(op string, raw []byte) ([]byte, bool) { return s.followerAsk(h, client, op, raw, false) },
	})
}

// NoSuchShare is the close reason for a follower of an unknown share key.
const NoSuchShare = "no such shared session: it may have ended"

// CloseWith sends a close frame with code and a reason cut to fit.
func CloseWith(conn *websocket.Conn, code int, text string) {
	conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, truncateUTF8(text, 120)), time.Now().Add(writeWait))
}

// FollowerOptions configure Hub.Serve.
type FollowerOptions struct {
	MaxCommandBytes int // longer commands get an error reply
	// Ask answers a follower's command other than "drawn" — "fork", or a
	// question to the view such as "decode" — (raw: the command as sent)
	// with a text or binary message; nil: they are refused.
	Ask func(op string, raw []byte) (msg []byte, binary bool)
	// Stop closes the follower with StopCode and StopText (a relay
	// shutting down); nil: never.
	Stop     <-chan struct{}
	StopCode int
	StopText string
}

// Serve runs a follower's connection on h: hello first, then h's setups,
// history, presentation and frames, frames paced by the page's "drawn"
// (drawgate.go), until the connection closes, the session ends (close
// 1001 with the reason End gave) or o.Stop.
func (h *Hub) Serve(conn *websocket.Conn, hello []byte, o FollowerOptions) {
	f := h.join()
	if f == nil {
		h.mu.Lock()
		reason := h.endReason
		h.mu.Unlock()
		CloseWith(conn, closeGoingAway, reason)
		return
	}
	defer h.leave(f)
	out := make(chan outMsg, 8) // replies from the reader
	done := make(chan struct{})
	gate := newDrawGate()
	go followerReader(conn, gate, o, out, done)
	conn.SetWriteDeadline(time.Now().Add(writeWait))
	if conn.WriteMessage(websocket.TextMessage, hello) != nil {
		return
	}
	ping := time.NewTicker(pingPeriod)
	defer ping.Stop()
	write := func(mt int, b []byte) bool {
		conn.SetWriteDeadline(time.Now().Add(writeWait))
		return conn.WriteMessage(mt, b) == nil
	}
	// send sends what waits, in the order the page needs it: the setup
	// (frames and the history refer to it), the history, the presentation
	// state, then the latest frame when the page has drawn the last one
	// (drawgate.go), or sets timeout for when the gate opens anyway.
	timeout := time.NewTimer(time.Hour)
	timeout.Stop()
	defer timeout.Stop()
	send := func() bool {
		if b, ok := f.setup.take(); ok && !write(websocket.BinaryMessage, b) {
			return false
		}
		if b, ok := f.history.take(); ok && !write(websocket.BinaryMessage, b) {
			return false
		}
		if b, ok := f.present.take(); ok && !write(websocket.TextMessage, b) {
			return false
		}
		for _, b := range f.views.take() {
			if !write(websocket.BinaryMessage, b) {
				return false
			}
		}
		if !f.frame.has() {
			return true
		}
		now := time.Now()
		if open, wait := gate.open(now); !open {
			timeout.Reset(wait)
			return true
		}
		fr, ok := f.frame.take()
		if !ok {
			return true
		}
		gate.sent(fr.seq, now)
		return write(websocket.BinaryMessage, fr.b)
	}
	if !send() {
		return
	}
	for {
		select {
		case <-done:
			return
		case m := <-out:
			mt := websocket.TextMessage
			if m.binary {
				mt = websocket.BinaryMessage
			}
			if !write(mt, m.data) {
				return
			}
		case <-f.setup.notify:
		case <-f.history.notify:
		case <-f.present.notify:
		case <-f.views.notify:
		case <-f.frame.notify:
		case <-gate.notify:
		case <-timeout.C:
		case <-ping.C:
			if conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(writeWait)) != nil {
				return
			}
			continue
		case <-h.done:
			h.mu.Lock()
			reason := h.endReason
			h.mu.Unlock()
			CloseWith(conn, closeGoingAway, reason)
			return
		case <-o.Stop:
			CloseWith(conn, o.StopCode, o.StopText)
			return
		}
		if !send() {
			return
		}
	}
}

// followerReader reads a follower's commands: "drawn" opens the
// follower's gate (drawgate.go); "fork" and "decode" go to o.Ask;
// anything else is refused (read-only).
func followerReader(conn *websocket.Conn, gate *drawGate, o FollowerOptions, out chan<- outMsg, done chan<- struct{}) {
	defer close(done)
	conn.SetReadLimit(hardReadLimit)
	conn.SetReadDeadline(time.Now().Add(pongWait))
	conn.SetPongHandler(func(string) error { return conn.SetReadDeadline(time.Now().Add(pongWait)) })
	for {
		mt, r, err := conn.NextReader()
		if err != nil {
			return
		}
		conn.SetReadDeadline(time.Now().Add(pongWait))
		b, err := io.ReadAll(io.LimitReader(r, int64(o.MaxCommandBytes)+1))
		if err != nil {
			return
		}
		m := outMsg{}
		switch {
		case mt != websocket.TextMessage || len(b) > o.MaxCommandBytes || !utf8.Valid(b):
			m.data = reply{Type: "error", Error: "not a command"}.bytes()
		default:
			var c struct {
				ID  int64   `json:"id"`
				Op  string  `json:"op"`
				Seq *uint64 `json:"seq"`
			}
			err := json.Unmarshal(b, &c)
			switch {
			case err != nil:
				m.data = reply{Type: "error", Error: "a command is a JSON object with an op"}.bytes()
			case c.Op == "drawn" && c.Seq != nil && len(b) < 64: // every frame's: no second parse
				gate.drawn(*c.Seq)
				continue
			case c.Op == "drawn":
				c, err := ParseCommand(b)
				if err == nil {
					err = drawnSeq(c, gate)
				}
				if err == nil {
					continue // no reply
				}
				m.data = reply{Type: "error", ID: c.ID, Op: "drawn", Error: err.Error()}.bytes()
			case o.Ask != nil:
				m.data, m.binary = o.Ask(truncate(c.Op, 40), b)
			default:
				m.data = reply{Type: "error", ID: c.ID, Op: truncate(c.Op, 40), Error: "you are following a shared session (read-only): fork it to make it yours"}.bytes()
			}
		}
		select {
		case out <- m:
		case <-time.After(writeWait):
			return
		}
	}
}

// followerAsk answers a follower's command: "fork" parks a session of its
// own; a question to the presenter's view (view.Op.Answer, the
// autoencoder's "decode") is answered from the presenter's published
// model; anything else is refused (read-only). remote marks a follower of
// a relay, whose fork ack carries the link to this server's page that
// resumes the fork (ShareOptions.PublicURL).
func (s *Server) followerAsk(h *Hub, client, op string, raw []byte, remote bool) ([]byte, bool) {
	c, _ := ParseCommand(raw)
	switch {
	case op == "fork":
	case h.answerable(op):
		answer, rep := s.followerAnswer(h, client, raw)
		if answer != nil {
			return answer, true
		}
		return rep.bytes(), false
	default:
		return reply{Type: "error", ID: c.ID, Op: op, Error: "you are following a shared session (read-only): fork it to make it yours"}.bytes(), false
	}
	token, err := s.fork(h, client)
	if errors.Is(err, ErrTooOften) {
		// A refusal waits, as an upload's does (web): a follower that
		// asks as fast as it is answered is slowed to one a second.
		time.Sleep(time.Second)
	}
	if err != nil {
		return reply{Type: "error", ID: c.ID, Op: "fork", Error: err.Error()}.bytes(), false
	}
	ack := forkAck{reply: reply{Type: "ack", ID: c.ID, Op: "fork", Message: "forked: reconnecting to your own copy", Resume: token}}
	if remote && s.share.PublicURL != "" {
		ack.URL = s.share.PublicURL + "?resume=" + token
		ack.Message = "forked: opening your own copy on the presenter's server"
	}
	return ack.bytes(), false
}

// forkAck is the ack of a fork; URL (a follower of a relay) is the page
// that resumes it on the presenter's server.
type forkAck struct {
	reply
	URL string `json:"url,omitempty"`
}

func (a forkAck) bytes() []byte {
	a.V = ProtocolVersion
	b, _ := json.Marshal(a)
	return b
}

// followerAnswer answers a follower's question to the view (command b)
// from the presenter's published model: a binary message, or an error
// reply. Each question is a job of the follower's client in the server's
// pool (work.go), so that a room of followers hovering over faces costs
// the presenter's machine the pool's cores at most, shared fairly.
func (s *Server) followerAnswer(h *Hub, client string, b []byte) ([]byte, reply) {
	c, err := ParseCommand(b)
	if err != nil {
		return nil, reply{Type: "error", ID: c.ID, Op: c.Op, Error: err.Error()}
	}
	h.mu.Lock()
	st := h.state
	h.mu.Unlock()
	if st == nil {
		return nil, reply{Type: "error", ID: c.ID, Op: c.Op, Error: c.Op + ": the shared session has no model yet"}
	}
	// The follower's reader waits for the answer, so it cannot see the
	// follower leave: the wait for a turn is bounded instead.
	ctx, cancel := context.WithTimeout(s.bg, writeWait)
	defer cancel()
	ans, err := s.answerAsJob(ctx, client, st.pub, c)
	if errors.Is(err, context.DeadlineExceeded) {
		err = errors.New(c.Op + ": " + errClientBusy.Error())
	}
	if err != nil {
		return nil, reply{Type: "error", ID: c.ID, Op: c.Op, Error: err.Error()}
	}
	return ans, reply{}
}

// answerable reports whether op is a question to the presenter's view.
func (h *Hub) answerable(op string) bool {
	h.mu.Lock()
	st := h.state
	h.mu.Unlock()
	if st == nil {
		return false
	}
	o, ok := view.FindOp(st.pub.view, op)
	return ok && o.Answer != nil
}

// fork parks a session of client's starting from h's presenter's current
// state (a parked-state allowance of the client's, upload.go).
func (s *Server) fork(h *Hub, client string) (string, error) {
	h.mu.Lock()
	st := h.state
	h.mu.Unlock()
	if st == nil {
		return "", errors.New("the shared session has no model yet")
	}
	if err := s.takePark(client); err != nil {
		return "", err
	}
	snap := st.pub.snap
	n, q, dy := snap.Data.Dims()
	cfg := st.cfg
	cfg.Play = false
	e := estimateStarted(cfg, snap.Data.Set, n, q, dy) // a fork does not keep the presenter's restarts
	if err := checkBudget(e, s.limits); err != nil {
		return "", err
	}
	p := &parked{cfg: cfg, data: snap.Data, model: snap.Model.Clone(), iter: snap.Iter, restart: -1}
	return s.parkNew(client, p, nil, e.Bytes)
}

// relayClient is the client the followers of relays count as (share.go).
const relayClient = "relays"
