package stream

import (
	"slices"
	"strconv"
	"time"
)

// Admission by load: the server watches the frame rates its playing
// sessions actually get and, while the typical one is below the stated
// minimum (MinFrameRate), turns new sessions away with 1013 "try again
// later" instead of letting everyone degrade further.

const (
	loadSample = time.Second // how often frame rates are sampled
	// loadShare of MinFrameRate is the median rate below which the server
	// counts as saturated (8 frames/s for a 10 frames/s minimum), so that
	// sampling jitter around the minimum does not flip admission.
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

// watchLoad samples the sessions' frame rates until the server's
// background context ends.
func (s *Server) watchLoad() {
	t := time.NewTicker(loadSample)
	defer t.Stop()
	last := map[*session]int64{}
	lastT := time.Now()
	low, high := 0, 0
	for {
		select {
		case <-s.bg.Done():
			return
		case now := <-t.C:
			dt := now.Sub(lastT).Seconds()
			lastT = now
			var rates, waits []float64
			s.mu.Lock()
			seen := make(map[*session]int64, len(s.sessions))
			playingCount := 0
			for ss := range s.sessions {
				if ss.playing.Load() {
					playingCount++
				}
				w := ss.written.Load()
				seen[ss] = w
				if prev, ok := last[ss]; ok && ss.playing.Load() && dt > 0 {
					rates = append(rates, float64(w-prev)/dt)
				}
				if cw := ss.cmdWait.Swap(0); cw > 0 {
					waits = append(waits, time.Duration(cw).Seconds())
				}
			}
			s.mu.Unlock()
			last = seen
			s.playingNow.Store(int64(playingCount))
			if saturated(rates) || slowReplies(waits) {
				low, high = low+1, 0
			} else {
				low, high = 0, high+1
			}
			switch {
			case low >= loadSamples && !s.overloaded.Load():
				s.overloaded.Store(true)
				s.log.Warn("saturated: refusing new sessions", "playing", len(rates), "median_fps", median(rates))
			case high >= loadSamples && s.overloaded.Load():
				s.overloaded.Store(false)
				s.log.Info("admitting new sessions again", "playing", len(rates), "median_fps", median(rates))
			}
		}
	}
}

// saturated reports whether the median of the playing sessions' frame
// rates is below loadShare of the minimum: a single slow client (its own
// network) does not count, most sessions starving does.
func saturated(rates []float64) bool {
	return len(rates) >= 2 && median(rates) < loadShare*MinFrameRate
}

// slowReplies reports whether the median session that sent commands in the
// last sample waited longer than loadReplyWait for one to be handled.
func slowReplies(waits []float64) bool {
	return len(waits) >= 2 && median(waits) > loadReplyWait.Seconds()
}

func median(v []float64) float64 {
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

// overloadText is the close reason for a session refused by load.
func overloadText() string {
	return "the server is at capacity: live sessions get fewer than " + strconv.Itoa(MinFrameRate) + " frames per second or wait for replies; try again later"
}
