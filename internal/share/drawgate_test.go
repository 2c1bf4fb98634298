package share

import (
	"testing"
	"time"
)

// TestDrawGate: off until the page first says "drawn"; then shut while
// the last frame sent is undrawn, for at most DrawGateTimeout; a late or
// repeated "drawn" for an older frame does not reopen it.
func TestDrawGate(t *testing.T) {
	g := NewDrawGate()
	t0 := time.Unix(1000, 0)
	if open, _ := g.Open(t0); !open {
		t.Fatal("a page that never said drawn is gated")
	}
	g.Sent(1, t0)
	if open, _ := g.Open(t0); !open {
		t.Fatal("gated before the first drawn")
	}
	g.Drawn(1)
	g.Sent(2, t0)
	if open, wait := g.Open(t0.Add(100 * time.Millisecond)); open || wait != DrawGateTimeout-100*time.Millisecond {
		t.Fatalf("frame 2 undrawn: open %v, wait %v; want shut for %v", open, wait, DrawGateTimeout-100*time.Millisecond)
	}
	g.Drawn(1) // late or repeated
	if open, _ := g.Open(t0); open {
		t.Fatal("a drawn for frame 1 opened the gate for frame 2's successor")
	}
	if open, _ := g.Open(t0.Add(DrawGateTimeout)); !open {
		t.Fatal("still shut after the timeout")
	}
	g.Drawn(2)
	if open, _ := g.Open(t0); !open {
		t.Fatal("shut after frame 2 was drawn")
	}
	select {
	case <-g.Ready():
	default:
		t.Fatal("drawn did not notify the writer")
	}
}
