package stream

import (
	"time"

	"dgpviz/internal/share"
)

// frameCostShare is the largest share of wall time spent building frames:
// a frame that took c to build is followed by a gap of at least c/share,
// so that streaming costs the optimizer at most about this share of a CPU.
const frameCostShare = 0.08

// MinFrameRate is the frame rate every session gets however expensive its
// frames look: a frame's cost is measured in wall time, which on a busy
// machine includes the wait for a CPU, and 16 sessions flat out once
// throttled each other to 2.7 frames per second that way.
const MinFrameRate = 10

// pacer decides when a connection's next frame goes. One rule: a frame
// goes when the page has drawn the last one (drawGate; or its timeout),
// and no sooner than the gap after the last frame started — FrameInterval
// for a frame that shows a command's effect, else a gap that keeps the
// building of frames under frameCostShare of the wall time and the rate
// at MinFrameRate or more. The writer asks due before it builds a frame,
// and waits on C until then.
type pacer struct {
	gate        *share.DrawGate
	timer       *time.Timer
	armed       time.Time // when the timer fires; zero: not set
	lastStart   time.Time
	gap         time.Duration
	cost        time.Duration // smoothed time to build a frame
	lastApplied int64         // the last command whose effect a frame showed
}

func newPacer(gate *share.DrawGate) *pacer {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &pacer{gate: gate, timer: t}
}

// C fires when a frame that had to wait may go.
func (p *pacer) C() <-chan time.Time { return p.timer.C }

// due returns how long a frame of a publication whose last applied command
// is applied must still wait (0: it may go now), and sets the timer for
// then.
func (p *pacer) due(now time.Time, applied int64) time.Duration {
	gap := p.gap
	if applied > p.lastApplied {
		gap = FrameInterval // show a command's effect as soon as allowed
	}
	wait := p.lastStart.Add(gap).Sub(now)
	if open, w := p.gate.Open(now); !open {
		wait = max(wait, w)
	}
	if wait <= 0 {
		p.armed = time.Time{}
		p.timer.Stop()
		return 0
	}
	if at := now.Add(wait); p.armed.IsZero() || at.Before(p.armed) {
		p.armed = at
		p.timer.Reset(wait)
	}
	return wait
}

// fired records that the timer has fired.
func (p *pacer) fired() { p.armed = time.Time{} }

// sent records a frame that started at t0, took cost to build and showed
// the effect of command applied.
func (p *pacer) sent(seq uint64, t0 time.Time, cost time.Duration, applied int64) {
	if p.cost == 0 {
		p.cost = cost
	} else {
		p.cost = (3*p.cost + cost) / 4
	}
	p.gap = min(time.Second/MinFrameRate, max(FrameInterval, time.Duration(float64(p.cost)/frameCostShare)))
	p.lastStart, p.lastApplied = t0, applied
	p.gate.Sent(seq, time.Now())
}
