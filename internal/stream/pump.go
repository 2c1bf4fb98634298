package stream

import (
	"errors"
	"io"
	"time"
	"unicode/utf8"

	"github.com/gorilla/websocket"
)

// The connection's two pumps, as in gorilla/websocket's chat example: the
// reader turns text messages into commands for the optimizer goroutine, and
// the writer is the only goroutine that writes to the socket (replies,
// setups, frames from the latest-wins mailbox, message-figure messages and
// pings), so that a slow client never blocks the optimizer.

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
		if !utf8.Valid(buf[:n]) { // RFC 6455 §8.1: text must be UTF-8
			ss.fail(closeBadData, "text message is not valid UTF-8")
			return
		}
		c, err := ParseCommand(buf[:n])
		c.received = time.Now()
		if err != nil {
			ss.reply(reply{Type: "error", ID: c.ID, Op: truncate(c.Op, 40), Error: err.Error()})
			continue
		}
		if c.Op == "decode" { // answered off the optimizer goroutine (decode.go)
			ss.queueDecode(c)
			continue
		}
		if c.Op == "present" { // the presentation state, for followers (present.go)
			ss.present(c)
			continue
		}
		if c.Op == "drawn" { // the page's drawing paces the frames (drawgate.go)
			if err := drawnSeq(c, ss.gate); err != nil {
				ss.reply(reply{Type: "error", ID: c.ID, Op: c.Op, Error: err.Error()})
			}
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
	// arm sets the slot timer for at, unless it is set for sooner.
	arm := func(at time.Time) {
		if slot == nil || at.Before(slotAt) {
			slotTimer.Reset(time.Until(at))
			slot, slotAt = slotTimer.C, at
		}
	}
	sendFrame := func() bool {
		if !drain() {
			return false
		}
		t0 := time.Now()
		if open, wait := ss.gate.open(t0); !open { // the page draws the last one still
			if ss.frames.has() {
				arm(t0.Add(wait))
			}
			return true
		}
		snap, ok := ss.frames.take()
		if !ok {
			return true
		}
		b, err := f.frame(snap)
		if err != nil {
			ss.log.Error("frame", "err", err)
			return true
		}
		lastStart, gap, lastApplied = t0, frameGap(time.Since(t0), f), snap.applied
		// The same bytes to every follower (follow.go), before the
		// presenter has them: a follower who joins once the presenter has
		// seen this frame starts from it, not from the one before.
		ss.hub.publishFrame(b, f.seq)
		if !write(outMsg{binary: true, data: b}) {
			return false
		}
		ss.gate.sent(f.seq, time.Now())
		ss.written.Add(1)
		return true
	}
	// frameReady sends the latest snapshot as a frame when its time
	// has come (frameGap), or sets the slot timer for then.
	frameReady := func() bool {
		g := gap
		ss.frames.peek(func(s *snapshot) {
			if s.applied > lastApplied {
				g = FrameInterval // show a command's effect as soon as allowed
			}
		})
		if at := lastStart.Add(g); time.Until(at) > 0 {
			arm(at)
			return true
		}
		slot = nil
		slotTimer.Stop()
		return sendFrame()
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
				conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, truncateUTF8(text, 120)), time.Now().Add(writeWait))
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
			if !frameReady() {
				conn.Close()
				return
			}
		case <-ss.gate.notify: // the page drew a frame (drawgate.go)
			if ss.frames.has() && !frameReady() {
				conn.Close()
				return
			}
		case <-slot:
			slot = nil
			if !sendFrame() {
				conn.Close()
				return
			}
		case <-ss.compare.out.notify: // the depth comparison (compare.go), latest wins
			if b, ok := ss.compare.out.take(); ok {
				if !write(outMsg{binary: true, data: b}) {
					conn.Close()
					return
				}
			}
		case <-ss.density.out.notify: // the fit panel's density (density.go), latest wins
			if b, ok := ss.density.out.take(); ok {
				if !write(outMsg{binary: true, data: b}) {
					conn.Close()
					return
				}
			}
		case <-ss.figure.out.notify: // message figure (messagefigure.go), latest wins
			if b, ok := ss.figure.out.take(); ok {
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

// MinFrameRate is the frame rate every session gets however expensive its
// frames look: a frame's cost is measured in wall time, which on a busy
// machine includes the wait for a CPU, and 16 sessions flat out once
// throttled each other to 2.7 frames per second that way.
const MinFrameRate = 10

// frameGap returns the time from the start of one frame to the next: at
// least FrameInterval (60 per second), longer when frames are expensive
// (large data sets), at most 1/MinFrameRate. The cost is smoothed over
// recent frames.
func frameGap(cost time.Duration, f *framer) time.Duration {
	if f.cost == 0 {
		f.cost = cost
	} else {
		f.cost = (3*f.cost + cost) / 4
	}
	return min(time.Second/MinFrameRate, max(FrameInterval, time.Duration(float64(f.cost)/frameCostShare)))
}
