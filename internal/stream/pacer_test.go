package stream

import (
	"testing"
	"time"

	"dgpviz/internal/share"
)

// TestFrameGap: frames come at most 60 per second, later when they are
// expensive, but never less than MinFrameRate per second, however slow a
// busy machine makes them look.
func TestFrameGap(t *testing.T) {
	for _, c := range []struct {
		cost     time.Duration
		min, max time.Duration
	}{
		{200 * time.Microsecond, FrameInterval, FrameInterval},               // the step demo's frame
		{3 * time.Millisecond, 30 * time.Millisecond, 45 * time.Millisecond}, // 3 ms / 0.08 = 37.5 ms
		{2 * time.Second, time.Second / MinFrameRate, time.Second / MinFrameRate},
	} {
		p := newPacer(share.NewDrawGate())
		p.sent(1, time.Now(), c.cost, 0)
		if g := p.gap; g < c.min || g > c.max {
			t.Errorf("frame cost %v: gap %v, want %v…%v", c.cost, g, c.min, c.max)
		}
	}
}
