package stream

import (
	"strconv"
	"time"

	"dgpviz/internal/admit"
)

// Admission by load (admit.Load): the server samples the frame rates its
// playing sessions get, every loadSample, and turns new sessions away
// with 1013 "try again later" while the typical one is below MinFrameRate.
const loadSample = time.Second

// watchLoad samples the sessions' frame rates until the server's
// background context ends.
func (s *Server) watchLoad() {
	t := time.NewTicker(loadSample)
	defer t.Stop()
	last := map[*session]int64{}
	lastT := time.Now()
	load := admit.NewLoad(MinFrameRate)
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
			over, changed := load.Sample(rates, waits)
			if !changed {
				continue
			}
			s.overloaded.Store(over)
			if over {
				s.log.Warn("saturated: refusing new sessions", "playing", len(rates), "median_fps", admit.Median(rates))
			} else {
				s.log.Info("admitting new sessions again", "playing", len(rates), "median_fps", admit.Median(rates))
			}
		}
	}
}

// overloadText is the close reason for a session refused by load.
func overloadText() string {
	return "the server is at capacity: live sessions get fewer than " + strconv.Itoa(MinFrameRate) + " frames per second or wait for replies; try again later"
}
