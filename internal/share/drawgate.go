package share

import (
	"sync/atomic"
	"time"
)

// DrawGate paces a connection's frames by its page's drawing: a page that
// says which frame it has drawn ("drawn", with the frame's seq) gets the
// next frame only when it has drawn the last one sent, so it draws every
// frame it receives, and frames it could not draw are neither built nor
// sent nor decoded (on a 2-core machine they took CPU from the drawing
// and from the optimizer alike). A connection that never says "drawn"
// (an older page, a script, a test) gets frames as before. A page that
// stops saying it (a tab in the background, a drawing that threw) still
// gets a frame every DrawGateTimeout.
//
// The reader calls Drawn; the writer calls Open before it sends a frame
// and Sent after, and waits on Ready while the gate is shut.
type DrawGate struct {
	on       atomic.Bool   // the page has said "drawn" once
	drawnSeq atomic.Uint64 // the latest frame it has drawn
	sentSeq  uint64        // the latest frame sent (the writer's own)
	sentAt   time.Time
	notify   chan struct{} // one slot: a "drawn" arrived
}

// DrawGateTimeout is how long a frame waits for a page that has stopped
// saying "drawn".
const DrawGateTimeout = time.Second

// NewDrawGate returns an open gate.
func NewDrawGate() *DrawGate { return &DrawGate{notify: make(chan struct{}, 1)} }

// Ready receives when a "drawn" has arrived since the last receive.
func (g *DrawGate) Ready() <-chan struct{} { return g.notify }

// Drawn records that the page has drawn frame seq.
func (g *DrawGate) Drawn(seq uint64) {
	g.on.Store(true)
	for {
		old := g.drawnSeq.Load()
		if seq <= old || g.drawnSeq.CompareAndSwap(old, seq) {
			break
		}
	}
	select {
	case g.notify <- struct{}{}:
	default:
	}
}

// Open reports whether a frame may be sent now and, if not, how long
// until the timeout opens the gate anyway.
func (g *DrawGate) Open(now time.Time) (bool, time.Duration) {
	if !g.on.Load() || g.drawnSeq.Load() >= g.sentSeq {
		return true, 0
	}
	if wait := g.sentAt.Add(DrawGateTimeout).Sub(now); wait > 0 {
		return false, wait
	}
	return true, 0
}

// Sent records a frame sent.
func (g *DrawGate) Sent(seq uint64, now time.Time) { g.sentSeq, g.sentAt = seq, now }
