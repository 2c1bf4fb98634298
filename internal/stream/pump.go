package stream

import (
	"errors"
	"fmt"
	"io"
	"time"
	"unicode/utf8"

	"dgpviz/internal/share"
	"dgpviz/internal/wire"

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
	defer ss.cancel(errors.New("connection closed by the client"))
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
			// The page said goodbye (a closed tab): its share ends now; a
			// dropped connection keeps it for the resume (resume.go).
			ss.pageLeft.Store(websocket.IsCloseError(err, websocket.CloseNormalClosure, websocket.CloseGoingAway))
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
			ss.reply(reply{Type: "error", Error: fmt.Errorf("command larger than the limit of %d bytes", limit).Error()})
			continue
		}
		if err != io.ErrUnexpectedEOF && err != io.EOF {
			if errors.Is(err, websocket.ErrReadLimit) {
				ss.fail(closeTooBig, "message larger than the hard limit")
			}
			return
		}
		if mt != websocket.TextMessage {
			ss.reply(reply{Type: "error", Error: fmt.Errorf("binary messages are not commands; send JSON text").Error()})
			continue
		}
		if !utf8.Valid(buf[:n]) { // RFC 6455 §8.1: text must be UTF-8
			ss.fail(closeBadData, "text message is not valid UTF-8")
			return
		}
		c, err := ParseCommand(buf[:n])
		c.Received = time.Now()
		if err != nil {
			ss.reply(reply{Type: "error", ID: c.ID, Op: wire.Truncate(c.Op, 40), Error: err.Error()})
			continue
		}
		if ss.answerable(c) { // answered off the optimizer goroutine (answer.go)
			ss.queueAnswer(c)
			continue
		}
		if c.Op == "present" { // the presentation state, for followers (share.PresentationOf)
			ss.present(c)
			continue
		}
		if c.Op == "drawn" { // the page's drawing paces the frames (share.DrawGate)
			if err := share.Drawn(c, ss.gate); err != nil {
				ss.reply(reply{Type: "error", ID: c.ID, Op: c.Op, Error: err.Error()})
			}
			continue
		}
		// A client's commands to its optimizers are paced (admit.CommandBurst):
		// each costs a publication and a frame, and a data edit one
		// evaluation of the model; a client that sends faster waits.
		if !ss.srv.commandRate.Wait(ss.ctx, ss.client) {
			return
		}
		select {
		case ss.cmds <- c:
		case <-ss.ctx.Done():
			return
		}
	}
}

// writer is the connection's only writer: replies and setups, the view's
// messages, frames and pings. Frames are built here from the latest
// publication when the pacer says one may go; a slow client skips
// publications instead of queueing them.
func (ss *session) writer(conn *websocket.Conn, built <-chan struct{}) {
	defer conn.Close() // also after a panic: the reader then ends
	defer ss.recoverPanic("writer")
	ping := time.NewTicker(pingPeriod)
	defer ping.Stop()
	// Until the model is built (built closed), only pings: the reader's
	// deadline runs from the start.
	for waiting := true; waiting; {
		select {
		case <-built:
			waiting = false
		case <-ping.C:
			if conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(writeWait)) != nil {
				ss.cancel(errors.New("the connection failed"))
				return
			}
		}
	}
	w := connWriter{conn: conn, wait: writeWait, pace: newPacer(ss.gate)}
	w.build.seq = ss.hub.LastSeq() // a resumed session's frames carry on its numbering
	for {
		ok := true
		select {
		case <-ss.ctx.Done():
			w.wait = closeWait // do not let a stalled client hold up a shutdown
			ss.closeConn(&w)
			return
		case m := <-ss.out:
			ok = w.write(m)
		case <-ss.viewOut.Ready():
			for _, b := range ss.viewOut.Take() {
				ss.hub.PublishView(b) // the followers' slides (share.Hub.PublishView)
				ok = ok && w.write(outMsg{binary: true, data: b})
			}
		case <-ss.frames.Ready(): // a new publication
			ok = ss.frameWhenDue(&w)
		case <-ss.gate.Ready(): // the page drew a frame (share.DrawGate)
			ok = ss.frameWhenDue(&w)
		case <-w.pace.C():
			w.pace.fired()
			ok = ss.frameWhenDue(&w)
		case <-ping.C:
			ok = conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(writeWait)) == nil
		}
		if !ok {
			ss.cancel(errors.New("the connection failed"))
			return
		}
	}
}

// connWriter is the writer's connection, its pacer and its frame builder.
type connWriter struct {
	conn  *websocket.Conn
	wait  time.Duration // allowed for one message; shortened when closing
	pace  *pacer
	build framer
}

func (w *connWriter) write(m outMsg) bool {
	w.conn.SetWriteDeadline(time.Now().Add(w.wait))
	mt := websocket.TextMessage
	if m.binary {
		mt = websocket.BinaryMessage
	}
	return w.conn.WriteMessage(mt, m.data) == nil
}

// frameWhenDue sends the latest publication as a frame if the pacer lets
// it go now (else the pacer's timer is set for then).
func (ss *session) frameWhenDue(w *connWriter) bool {
	var applied int64
	ss.frames.Peek(func(p *publication) { applied = p.snap.Applied })
	if !ss.frames.Has() || w.pace.due(time.Now(), applied) > 0 {
		return true
	}
	p, _ := ss.frames.Take()
	// The replies and setups queued before p was published go first: the
	// optimizer queues a command's ack before it publishes the command's
	// effect, and a frame may refer to a setup just sent. Drained only
	// before p was taken, an ack queued meanwhile would follow its frame.
	if !ss.writeQueued(w) {
		return false
	}
	t0 := time.Now()
	b, err := w.build.frame(p)
	if err != nil {
		ss.log.Error("frame", "err", err)
		return true
	}
	// The same bytes to every follower (follow.go), before the presenter
	// has them: a follower who joins once the presenter has seen this
	// frame starts from it, not from the one before.
	ss.hub.PublishFrame(b, w.build.seq, p.snap.Data.ID, p.snap.Iter, len(p.snap.Model.Layers), p.snap.Eval)
	if !w.write(outMsg{binary: true, data: b}) {
		return false
	}
	w.pace.sent(w.build.seq, t0, time.Since(t0), p.snap.Applied)
	ss.written.Add(1)
	return true
}

// writeQueued writes the queued replies and setups; false when the
// connection failed.
func (ss *session) writeQueued(w *connWriter) bool {
	for {
		select {
		case m := <-ss.out:
			if !w.write(m) {
				return false
			}
		default:
			return true
		}
	}
}

// closeConn sends what is queued, then the close frame with the session's
// close code, and waits briefly for the client's.
func (ss *session) closeConn(w *connWriter) {
	ss.writeQueued(w)
	ss.closeMu.Lock()
	code, text := ss.closeCode, ss.closeText
	ss.closeMu.Unlock()
	if code != 0 {
		w.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, wire.Cut(text, 120)), time.Now().Add(writeWait))
		// Wait for the client's close frame, which ends the reader.
		w.conn.SetReadDeadline(time.Now().Add(closeWait))
		select {
		case <-ss.readerDone:
		case <-time.After(closeWait):
		}
	}
	w.conn.Close()
}
