package share

import (
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"
	"unicode/utf8"

	"dgpviz/internal/train"
	"dgpviz/internal/wire"

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

// Websocket timing and size, as in gorilla/websocket's chat example: the
// transport's (dgpviz/internal/stream) connections and the followers'
// alike.
const (
	WriteWait  = 10 * time.Second  // time allowed to write one message
	PongWait   = 60 * time.Second  // time allowed to read the next pong
	PingPeriod = PongWait * 9 / 10 // send pings this often; < PongWait
	// ReadLimit is the websocket read limit: a message larger than this
	// closes the connection (1009).
	ReadLimit = 1 << 20
)

// ReadOnly is the refusal of a follower's command that only the presenter
// may send.
const ReadOnly = "you are following a shared session (read-only): fork it to make it yours"

// message is a message for a follower's connection.
type message struct {
	data   []byte
	binary bool
}

// ErrorReply is an "error" reply to command id of op (docs/protocol.md,
// "Replies"), for a follower.
func ErrorReply(id int64, op, text string) []byte {
	b, _ := json.Marshal(struct {
		V     int    `json:"v"`
		Type  string `json:"type"`
		ID    int64  `json:"id,omitempty"`
		Op    string `json:"op,omitempty"`
		Error string `json:"error,omitempty"`
	}{wire.Version, "error", id, op, text})
	return b
}

// Drawn opens gate for the frame a "drawn" command names.
func Drawn(c wire.Command, gate *DrawGate) error {
	if c.Seq == nil {
		return fmt.Errorf("drawn: missing \"seq\" (the sequence number of the frame drawn)")
	}
	gate.Drawn(*c.Seq)
	return nil
}

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
	hist      train.History          // the bound history (history.go)
	histData  int                    // the data set it is of (the latest setup's data_id)
	histMsg   []byte                 // its encoding, until it changes
	state     State                  // what a fork starts from (the presenter's server only)
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

type follower struct {
	setup   *Mailbox[[]byte]
	history *Mailbox[[]byte]
	present *Mailbox[[]byte]
	views   *Outbox
	frame   *Mailbox[seqFrame]
}

// seqFrame is an encoded frame and its sequence number (the follower's
// DrawGate compares it with what the page has drawn).
type seqFrame struct {
	b   []byte
	seq uint64
}

// NewHub returns the hub of the session shared under key.
func NewHub(key string) *Hub {
	return &Hub{key: key, followers: map[*follower]struct{}{}, done: make(chan struct{}), recount: make(chan struct{}, 1)}
}

// Recount receives when the number of followers changed since it last
// did: the presenter's session says so at once (frames' "followers").
func (h *Hub) Recount() <-chan struct{} { return h.recount }

// counted tells the session that the number of followers changed.
func (h *Hub) counted() {
	select {
	case h.recount <- struct{}{}:
	default: // one wake-up is pending
	}
}

// FeedTo makes out a second feed of h's stream: a Publisher's, beyond the
// process. Call it before the hub is fed.
func (h *Hub) FeedTo(out Feed) { h.out = out }

// LastSeq returns the "seq" of the latest frame the hub fanned out (0:
// none): a resumed session numbers its frames on from there, so that the
// hub and its followers take them as newer.
func (h *Hub) LastSeq() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.frame.seq
}

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
		f.setup.Put(b)
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
		h.hist.Reset()
		clear(h.views) // of the data before
	}
	h.histData = hd.DataID
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
	h.PublishFrame(b, seq, hd.DataID, hd.Iter, len(hd.Layers), evalOf(hd))
}

// PublishFrame is the presenter's writer's Frame: b's point of the
// history is the published model's own evaluation ev (nil: none) at
// iteration iter, of layers layers, fitted to data set dataID, not read
// back from b.
func (h *Hub) PublishFrame(b []byte, seq uint64, dataID, iter, layers int, ev *train.Evaluation) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ended || (h.frame.b != nil && seq <= h.frame.seq) { // seq grows with every frame of a session
		return
	}
	h.frame = seqFrame{b, seq}
	if dataID == h.histData && h.hist.Add(iter, layers, ev) {
		h.histMsg = nil
	}
	for f := range h.followers {
		f.frame.Put(h.frame)
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
		f.present.Put(b)
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

// A State is the presenter's state as last published, on the presenter's
// server (a relay's hub has none): what a fork starts from, which the
// transport keeps, and the presenter's configuration.
type State interface {
	// Config is the presenter's configuration as JSON (the follower's
	// hello's "config").
	Config() json.RawMessage
}

// SetState records the presenter's state as last published.
func (h *Hub) SetState(st State) {
	h.mu.Lock()
	h.state = st
	h.mu.Unlock()
}

// State returns the presenter's state as last published (nil: none yet,
// or a relay's hub).
func (h *Hub) State() State {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.state
}

// Count is the number of followers, relays' included (shown to the
// presenter in frames).
func (h *Hub) Count() int {
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

// Watching records that a relay serves n followers of the session.
func (h *Hub) Watching(relay string, n int) {
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
	if h.histMsg == nil && h.hist.Len() > 0 {
		h.histMsg = encodeHistory(&h.hist, h.histData)
	}
	return h.histMsg
}

// join adds a follower with the latest setup, history, presentation and
// frame already queued; nil once the session has ended.
func (h *Hub) join() *follower {
	f := &follower{setup: NewMailbox[[]byte](), history: NewMailbox[[]byte](), present: NewMailbox[[]byte](), views: NewOutbox(), frame: NewMailbox[seqFrame]()}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ended {
		return nil
	}
	if h.setup != nil {
		f.setup.Put(h.setup)
	}
	if b := h.historyMsg(); b != nil {
		f.history.Put(b)
	}
	if h.present != nil {
		f.present.Put(h.present)
	}
	for typ, b := range h.views {
		f.views.Put(typ, b)
	}
	if h.frame.b != nil {
		f.frame.Put(h.frame)
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

// Config returns the presenter's configuration as last published, as
// JSON (nil: not known yet).
func (h *Hub) Config() json.RawMessage {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.state != nil {
		return h.state.Config()
	}
	return h.info.Config
}

// Info returns what a relay knows of the presenter (Restore).
func (h *Hub) Info() ShareInfo {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.info
}

// NoSuchShare is the close reason for a follower of an unknown share key.
const NoSuchShare = "no such shared session: it may have ended"

// CloseWith sends a close frame with code and a reason cut to fit.
func CloseWith(conn *websocket.Conn, code int, text string) {
	conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, wire.Cut(text, 120)), time.Now().Add(WriteWait))
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
		CloseWith(conn, websocket.CloseGoingAway, reason)
		return
	}
	defer h.leave(f)
	out := make(chan message, 8) // replies from the reader
	done := make(chan struct{})
	gate := NewDrawGate()
	go followerReader(conn, gate, o, out, done)
	conn.SetWriteDeadline(time.Now().Add(WriteWait))
	if conn.WriteMessage(websocket.TextMessage, hello) != nil {
		return
	}
	ping := time.NewTicker(PingPeriod)
	defer ping.Stop()
	write := func(mt int, b []byte) bool {
		conn.SetWriteDeadline(time.Now().Add(WriteWait))
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
		if b, ok := f.setup.Take(); ok && !write(websocket.BinaryMessage, b) {
			return false
		}
		if b, ok := f.history.Take(); ok && !write(websocket.BinaryMessage, b) {
			return false
		}
		if b, ok := f.present.Take(); ok && !write(websocket.TextMessage, b) {
			return false
		}
		for _, b := range f.views.Take() {
			if !write(websocket.BinaryMessage, b) {
				return false
			}
		}
		if !f.frame.Has() {
			return true
		}
		now := time.Now()
		if open, wait := gate.Open(now); !open {
			timeout.Reset(wait)
			return true
		}
		fr, ok := f.frame.Take()
		if !ok {
			return true
		}
		gate.Sent(fr.seq, now)
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
		case <-f.setup.Ready():
		case <-f.history.Ready():
		case <-f.present.Ready():
		case <-f.views.Ready():
		case <-f.frame.Ready():
		case <-gate.Ready():
		case <-timeout.C:
		case <-ping.C:
			if conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(WriteWait)) != nil {
				return
			}
			continue
		case <-h.done:
			h.mu.Lock()
			reason := h.endReason
			h.mu.Unlock()
			CloseWith(conn, websocket.CloseGoingAway, reason)
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
func followerReader(conn *websocket.Conn, gate *DrawGate, o FollowerOptions, out chan<- message, done chan<- struct{}) {
	defer close(done)
	conn.SetReadLimit(ReadLimit)
	conn.SetReadDeadline(time.Now().Add(PongWait))
	conn.SetPongHandler(func(string) error { return conn.SetReadDeadline(time.Now().Add(PongWait)) })
	for {
		mt, r, err := conn.NextReader()
		if err != nil {
			return
		}
		conn.SetReadDeadline(time.Now().Add(PongWait))
		b, err := io.ReadAll(io.LimitReader(r, int64(o.MaxCommandBytes)+1))
		if err != nil {
			return
		}
		m := message{}
		switch {
		case mt != websocket.TextMessage || len(b) > o.MaxCommandBytes || !utf8.Valid(b):
			m.data = ErrorReply(0, "", "not a command")
		default:
			var c struct {
				ID  int64   `json:"id"`
				Op  string  `json:"op"`
				Seq *uint64 `json:"seq"`
			}
			err := json.Unmarshal(b, &c)
			switch {
			case err != nil:
				m.data = ErrorReply(0, "", "a command is a JSON object with an op")
			case c.Op == "drawn" && c.Seq != nil && len(b) < 64: // every frame's: no second parse
				gate.Drawn(*c.Seq)
				continue
			case c.Op == "drawn":
				c, err := wire.DecodeCommand(b)
				if err == nil {
					err = Drawn(c, gate)
				}
				if err == nil {
					continue // no reply
				}
				m.data = ErrorReply(c.ID, "drawn", err.Error())
			case o.Ask != nil:
				m.data, m.binary = o.Ask(wire.Truncate(c.Op, 40), b)
			default:
				m.data = ErrorReply(c.ID, wire.Truncate(c.Op, 40), ReadOnly)
			}
		}
		select {
		case out <- m:
		case <-time.After(WriteWait):
			return
		}
	}
}
