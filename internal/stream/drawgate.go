package stream

import (
	"sync/atomic"
	"time"
)

// drawGate paces a connection's frames by its page's drawing: a page that
// says which frame it has drawn ("drawn", with the frame's seq) gets the
// next frame only when it has drawn the last one sent, so it draws every
// frame it receives, and frames it could not draw are neither built nor
// sent nor decoded (on a 2-core machine they took CPU from the drawing
// and from the optimizer alike). A connection that never says "drawn"
// (an older page, a script, a test) gets frames as before. A page that
// stops saying it (a tab in the background, a drawing that threw) still
// gets a frame every drawGateTimeout.
//
// The reader calls drawn; the writer calls open before it sends a frame
// and sent after, and waits on notify while the gate is shut.
type drawGate struct {
	on       atomic.Bool   // the page has said "drawn" once
	drawnSeq atomic.Uint64 // the latest frame it has drawn
	sentSeq  uint64        // the latest frame sent (the writer's own)
	sentAt   time.Time
	notify   chan struct{} // one slot: a "drawn" arrived
}

// drawGateTimeout is how long a frame waits for a page that has stopped
// saying "drawn".
const drawGateTimeout = time.Second

func newDrawGate() *drawGate { return &drawGate{notify: make(chan struct{}, 1)} }

// drawn records that the page has drawn frame seq.
func (g *drawGate) drawn(seq uint64) {
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

// open reports whether a frame may be sent now and, if not, how long
// until the timeout opens the gate anyway.
func (g *drawGate) open(now time.Time) (bool, time.Duration) {
	if !g.on.Load() || g.drawnSeq.Load() >= g.sentSeq {
		return true, 0
	}
	if wait := g.sentAt.Add(drawGateTimeout).Sub(now); wait > 0 {
		return false, wait
	}
	return true, 0
}

// sent records a frame sent.
func (g *drawGate) sent(seq uint64, now time.Time) { g.sentSeq, g.sentAt = seq, now }
