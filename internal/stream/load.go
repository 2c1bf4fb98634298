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

// watchLoad feeds the sessions' counters to the admission by load until
// the server's background context ends.
func (s *Server) watchLoad() {
	t := time.NewTicker(loadSample)
	defer t.Stop()
	load := admit.NewLoad(MinFrameRate)
	for {
		select {
		case <-s.bg.Done():
			return
		case now := <-t.C:
			s.mu.Lock()
			rs := make([]admit.Reading, 0, len(s.sessions))
			playing := 0
			for ss := range s.sessions {
				r := admit.Reading{Session: ss, Frames: ss.written.Load(), Playing: ss.playing.Load(), Wait: time.Duration(ss.cmdWait.Swap(0))}
				if r.Playing {
					playing++
				}
				rs = append(rs, r)
			}
			s.mu.Unlock()
			s.playingNow.Store(int64(playing))
			l := load.Observe(now, rs)
			if !l.Changed {
				continue
			}
			s.overloaded.Store(l.Overloaded)
			if l.Overloaded {
				s.log.Warn("saturated: refusing new sessions", "playing", l.Playing, "median_fps", l.MedianFPS)
			} else {
				s.log.Info("admitting new sessions again", "playing", l.Playing, "median_fps", l.MedianFPS)
			}
		}
	}
}

// overloadText is the close reason for a session refused by load.
func overloadText() string {
	return "the server is at capacity: live sessions get fewer than " + strconv.Itoa(MinFrameRate) + " frames per second or wait for replies; try again later"
}
