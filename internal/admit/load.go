package admit

import (
	"slices"
	"time"
)

// Admission by load: a server samples the frame rates its playing
// sessions actually get and how long their commands wait, and while the
// typical one is below the frame rate every session is promised, it turns
// new sessions away ("try again later") instead of letting everyone
// degrade further.

const (
	// loadShare of the promised frame rate is the median rate below which
	// the server counts as saturated (8 frames/s for a 10 frames/s
	// minimum), so that sampling jitter around the minimum does not flip
	// admission.
	loadShare = 0.8
	// loadSamples is how many consecutive samples must agree before the
	// state changes: two seconds, not one slow tick.
	loadSamples = 2
	// loadReplyWait: when the typical session's commands wait longer than
	// this for the optimizer goroutine, the CPU is saturated even though
	// frames still flow (measured: 64 sessions flat out on 2 cores, 18
	// frames/s but replies after 1.4–1.6 s at p95).
	loadReplyWait = 500 * time.Millisecond
)

// Load decides from a server's samples whether it is overloaded.
type Load struct {
	minRate    float64 // frames per second every session is promised
	low, high  int     // consecutive samples below and above
	overloaded bool
	last       map[any]int64 // each session's frames at the last sample
	lastAt     time.Time
}

// NewLoad returns the admission by load of a server that promises every
// session minFrameRate frames per second.
func NewLoad(minFrameRate float64) *Load { return &Load{minRate: minFrameRate} }

// A Reading is one session's counters as a sample finds them.
type Reading struct {
	Session any           // which session: its rate is against its last reading
	Frames  int64         // frames sent to it so far
	Playing bool          // its optimizer runs
	Wait    time.Duration // the longest its commands waited since the last sample
}

// A LoadSample is what a sample found.
type LoadSample struct {
	Overloaded, Changed bool    // after the sample, and whether that changed
	Playing             int     // sessions that played since the last sample
	MedianFPS           float64 // their median frame rate
}

// Observe takes the readings of every session at now, one sample every
// second or so: the frame rates of the sessions that play, from their
// frames since their last reading, and the waits of the commands they
// sent.
func (l *Load) Observe(now time.Time, readings []Reading) LoadSample {
	dt := now.Sub(l.lastAt).Seconds()
	var rates, waits []float64
	seen := make(map[any]int64, len(readings))
	for _, r := range readings {
		seen[r.Session] = r.Frames
		if prev, ok := l.last[r.Session]; ok && r.Playing && dt > 0 {
			rates = append(rates, float64(r.Frames-prev)/dt)
		}
		if r.Wait > 0 {
			waits = append(waits, r.Wait.Seconds())
		}
	}
	l.last, l.lastAt = seen, now
	over, changed := l.sample(rates, waits)
	return LoadSample{Overloaded: over, Changed: changed, Playing: len(rates), MedianFPS: Median(rates)}
}

// sample takes one sample — the playing sessions' frame rates and the
// waits of the commands sent since the last — and reports whether the
// server is overloaded after it, and whether that changed.
func (l *Load) sample(rates, waits []float64) (overloaded, changed bool) {
	if l.saturated(rates) || slowReplies(waits) {
		l.low, l.high = l.low+1, 0
	} else {
		l.low, l.high = 0, l.high+1
	}
	switch {
	case l.low >= loadSamples && !l.overloaded:
		l.overloaded = true
		return true, true
	case l.high >= loadSamples && l.overloaded:
		l.overloaded = false
		return false, true
	}
	return l.overloaded, false
}

// saturated reports whether the median of the playing sessions' frame
// rates is below loadShare of the minimum: a single slow client (its own
// network) does not count, most sessions starving does.
func (l *Load) saturated(rates []float64) bool {
	return len(rates) >= 2 && Median(rates) < loadShare*l.minRate
}

// slowReplies reports whether the median session that sent commands in the
// last sample waited longer than loadReplyWait for one to be handled.
func slowReplies(waits []float64) bool {
	return len(waits) >= 2 && Median(waits) > loadReplyWait.Seconds()
}

// Median is the median of v (0 when empty).
func Median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else {
		return (s[n/2-1] + s[n/2]) / 2
	}
}
