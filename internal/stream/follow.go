package stream

import (
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
// by the presenter's writer and fanned out by a hub: each follower has a
// one-slot latest-wins mailbox per kind, so a slow follower gets the
// latest frame and never holds up the presenter or the others. Followers
// run no model; the one command they may send is "fork", which parks a
// session of their own from the presenter's current state (resume.go) and
// answers with its resume token.

// DefaultMaxFollowers bounds the followers of all sessions together.
const DefaultMaxFollowers = 250

// hub fans one session's setups and frames out to its followers.
type hub struct {
	key string // the share key (hello's "share_key")

	mu        sync.Mutex
	followers map[*follower]struct{}
	setup     []byte // the latest setup and frame, for a follower who joins
	frame     seqFrame
	state     *forkState // what a fork starts from
}

// forkState is the presenter's state as last published: its
// configuration, and the publication (the model's immutable copy, its
// data and view).
type forkState struct {
	cfg Config
	pub *publication
}

type follower struct {
	setup *mailbox[[]byte]
	frame *mailbox[seqFrame]
}

// seqFrame is an encoded frame and its sequence number (the follower's
// drawGate compares it with what the page has drawn).
type seqFrame struct {
	b   []byte
	seq uint64
}

func newHub() *hub {
	return &hub{key: newResumeToken(), followers: map[*follower]struct{}{}}
}

func (h *hub) publishSetup(b []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.setup = b
	for f := range h.followers {
		f.setup.put(b)
	}
}

func (h *hub) publishFrame(b []byte, seq uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.frame = seqFrame{b, seq}
	for f := range h.followers {
		f.frame.put(h.frame)
	}
}

func (h *hub) publishState(st *forkState) {
	h.mu.Lock()
	h.state = st
	h.mu.Unlock()
}

// count is the number of followers (shown to the presenter in frames).
func (h *hub) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.followers)
}

// join adds a follower with the latest setup and frame already queued.
func (h *hub) join() *follower {
	f := &follower{setup: newMailbox[[]byte](), frame: newMailbox[seqFrame]()}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.setup != nil {
		f.setup.put(h.setup)
	}
	if h.frame.b != nil {
		f.frame.put(h.frame)
	}
	h.followers[f] = struct{}{}
	return f
}

func (h *hub) leave(f *follower) {
	h.mu.Lock()
	delete(h.followers, f)
	h.mu.Unlock()
}

// hubOf returns the live session shared under key.
func (s *Server) hubOf(key string) *hub {
	s.mu.Lock()
	defer s.mu.Unlock()
	for ss := range s.sessions {
		if ss.hub.key == key {
			return ss.hub
		}
	}
	return nil
}

// serveFollower runs a follower's connection until it closes or the
// presenter's session ends.
func (s *Server) serveFollower(w http.ResponseWriter, r *http.Request, key string) {
	conn, err := s.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer conn.Close()
	refuse := func(code int, text string) {
		conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, truncateUTF8(text, 120)), time.Now().Add(writeWait))
	}
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
		refuse(closeGoingAway, "server is shutting down")
		return
	case h == nil:
		refuse(closePolicy, "no such shared session: it may have ended")
		return
	case full:
		refuse(closeTryLater, "too many followers (limit "+strconv.Itoa(s.limits.MaxFollowers)+")")
		return
	}
	defer func() {
		s.mu.Lock()
		s.followers--
		s.mu.Unlock()
	}()
	f := h.join()
	defer h.leave(f)

	h.mu.Lock()
	st := h.state
	h.mu.Unlock()
	hello := reply{Type: "hello", Follower: true, Limits: &s.limits, Sets: s.cat.Info(), Groups: engine.GroupNames()}
	if st != nil {
		cfg := st.cfg
		hello.Config = &cfg
	}
	out := make(chan outMsg, 8) // replies from the reader
	done := make(chan struct{})
	gate := newDrawGate()
	go s.followerReader(conn, h, gate, out, done)
	conn.SetWriteDeadline(time.Now().Add(writeWait))
	if conn.WriteMessage(websocket.TextMessage, hello.bytes()) != nil {
		return
	}
	ping := time.NewTicker(pingPeriod)
	defer ping.Stop()
	gone := time.NewTicker(time.Second) // the presenter's session may end
	defer gone.Stop()
	write := func(mt int, b []byte) bool {
		conn.SetWriteDeadline(time.Now().Add(writeWait))
		return conn.WriteMessage(mt, b) == nil
	}
	// sendFrame sends the latest frame when the page has drawn the last
	// one (drawgate.go), or sets timeout for when the gate opens anyway.
	timeout := time.NewTimer(time.Hour)
	timeout.Stop()
	defer timeout.Stop()
	sendFrame := func() bool {
		// A setup queued meanwhile goes first: frames refer to it.
		if b, ok := f.setup.take(); ok && !write(websocket.BinaryMessage, b) {
			return false
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
			if b, ok := f.setup.take(); ok && !write(websocket.BinaryMessage, b) {
				return
			}
		case <-f.frame.notify:
			if !sendFrame() {
				return
			}
		case <-gate.notify:
			if f.frame.has() && !sendFrame() {
				return
			}
		case <-timeout.C:
			if !sendFrame() {
				return
			}
		case <-ping.C:
			if conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(writeWait)) != nil {
				return
			}
		case <-gone.C:
			if s.hubOf(key) == nil {
				refuse(closeGoingAway, "the presenter's session has ended")
				return
			}
		}
	}
}

// followerReader reads a follower's commands: "fork" parks a session of
// its own; a view's Answer ops (the autoencoder's "decode") are answered
// from the presenter's published model, since they change nothing;
// "drawn" opens the follower's gate (drawgate.go); anything else is
// refused (read-only).
func (s *Server) followerReader(conn *websocket.Conn, h *hub, gate *drawGate, out chan<- outMsg, done chan<- struct{}) {
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
		b, err := io.ReadAll(io.LimitReader(r, int64(s.limits.MaxCommandBytes)+1))
		if err != nil {
			return
		}
		var rep reply
		var answer []byte // a binary answer instead of rep
		switch {
		case mt != websocket.TextMessage || len(b) > s.limits.MaxCommandBytes || !utf8.Valid(b):
			rep = reply{Type: "error", Error: "not a command"}
		default:
			var c struct {
				ID int64  `json:"id"`
				Op string `json:"op"`
			}
			err := json.Unmarshal(b, &c)
			switch {
			case err != nil:
				rep = reply{Type: "error", Error: "a command is a JSON object with an op"}
			case h.answerable(c.Op):
				answer, rep = s.followerAnswer(h, b)
			case c.Op == "drawn":
				c, err := ParseCommand(b)
				if err == nil {
					err = drawnSeq(c, gate)
				}
				if err == nil {
					continue // no reply
				}
				rep = reply{Type: "error", ID: c.ID, Op: "drawn", Error: err.Error()}
			case c.Op != "fork":
				rep = reply{Type: "error", ID: c.ID, Op: truncate(c.Op, 40), Error: "you are following a shared session (read-only): fork it to make it yours"}
			default:
				token, err := s.fork(h)
				if err != nil {
					rep = reply{Type: "error", ID: c.ID, Op: "fork", Error: err.Error()}
				} else {
					rep = reply{Type: "ack", ID: c.ID, Op: "fork", Message: "forked: reconnecting to your own copy", Resume: token}
				}
			}
		}
		m := outMsg{binary: true, data: answer}
		if answer == nil {
			m = outMsg{data: rep.bytes()}
		}
		select {
		case out <- m:
		case <-time.After(writeWait):
			return
		}
	}
}

// followerAnswer answers a follower's question to the view (command b)
// from the presenter's published model: a binary message, or an error
// reply. Followers' questions take turns (Server.followerAnswers), so that
// a room of followers hovering over faces costs the presenter's machine
// one core at most.
func (s *Server) followerAnswer(h *hub, b []byte) ([]byte, reply) {
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
	select {
	case s.followerAnswers <- struct{}{}:
		defer func() { <-s.followerAnswers }()
	case <-time.After(writeWait):
		return nil, reply{Type: "error", ID: c.ID, Op: c.Op, Error: c.Op + ": the server is busy with other followers' questions; try again"}
	}
	ans, err := answer(s.bg, st.pub, c)
	if err != nil {
		return nil, reply{Type: "error", ID: c.ID, Op: c.Op, Error: err.Error()}
	}
	return ans, reply{}
}

// answerable reports whether op is an Answer op of the presenter's view.
func (h *hub) answerable(op string) bool {
	h.mu.Lock()
	st := h.state
	h.mu.Unlock()
	if st == nil {
		return false
	}
	o, ok := view.FindOp(st.pub.view, op)
	return ok && o.Answer != nil
}

// fork parks a session starting from h's presenter's current state.
func (s *Server) fork(h *hub) (string, error) {
	h.mu.Lock()
	st := h.state
	h.mu.Unlock()
	if st == nil {
		return "", errors.New("the shared session has no model yet")
	}
	snap := st.pub.snap
	n, q, dy := snap.Data.Dims()
	cfg := st.cfg
	cfg.Play = false
	p := &parked{cfg: cfg, data: snap.Data, model: snap.Model.Clone(), iter: snap.Iter, restart: -1, owner: &session{}}
	if err := s.reserve(p.owner, EstimateConfig(cfg, n, q, dy).Bytes); err != nil {
		return "", err
	}
	token := newResumeToken()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		delete(s.reserved, p.owner)
		return "", errors.New("the server is shutting down")
	}
	p.timer = time.AfterFunc(s.grace, func() { s.expire(token, p) })
	s.parked[token] = p
	return token, nil
}
