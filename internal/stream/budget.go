package stream

import (
	"errors"
	"fmt"
	"time"

	"dgpviz/internal/engine"
)

// Budget defaults: a session within every other limit (2,000 rows, six
// layers of width 8, 64 inducing points) was measured at 457 MB and 3
// iterations a second, and sixteen of them at 5.1 GB; these refuse such
// configurations with a clear error instead.
const (
	DefaultSessionMemory = 256 << 20 // bytes one session may be estimated to use
	DefaultServerMemory  = 1 << 30   // bytes all sessions together
	DefaultMaxIterTime   = time.Second
	// flopsPerSecond is the engine's rate in estimated flops on one core
	// of a busy machine: on this 2-core machine with other work running,
	// 1.5e9–2.0e9/s measured for the robot shape, the Frey shape, and
	// N=2000, M=64 with one and five hidden layers of width 8 (3.9e9/s for
	// the robot shape when the machine is quiet).
	flopsPerSecond = 2e9
	// evalsPerIteration: an L-BFGS iteration's line search takes 1.2
	// evaluations on average on the step and robot fits (StepInfo.Evals).
	evalsPerIteration = 1.3
	// sessionStates is how many model-sized states a session keeps besides
	// the optimizer's vectors: the live model, the frame writer's snapshot,
	// the message figure's copy and the state before a drag.
	sessionStates = 4
	// trainerVectors is the optimizer's vectors of parameter length: its
	// coordinates, gradients and line-search points (about 12) and
	// L-BFGS's 10 correction pairs (20).
	trainerVectors = 32
	// gcHeadroom: the Go heap grows to about twice the live data between
	// collections (GOGC=100).
	gcHeadroom = 2
)

// Estimate is what a configuration is expected to cost a session.
type Estimate struct {
	Bytes    int64         // heap, including the undo history and the collector's headroom
	IterTime time.Duration // one optimizer iteration on one core of a busy machine
}

// EstimateConfig estimates the cost of running configuration c on data
// set rows (n inputs of width q, outputs of width d).
func EstimateConfig(c Config, n, q, d int) Estimate {
	widths := append(append([]int{q}, c.Hidden...), d)
	cost := engine.EstimateCost(n, widths, c.Inducing)
	// The data are held once: published snapshots and undo states share
	// them (engine.Model.CloneParams); every other state is parameters.
	data := int64(8 * n * (q + d))
	params := engine.ModelBytes(n, widths, c.Inducing) - data
	history := min(int64(maxHistory)*params, maxHistoryBytes) // undo states
	live := cost.Bytes + 2*data + (sessionStates+trainerVectors)*params + history
	return Estimate{
		Bytes:    gcHeadroom * live,
		IterTime: time.Duration(cost.Flops * evalsPerIteration / flopsPerSecond * float64(time.Second)),
	}
}

// checkBudget refuses a configuration whose estimate exceeds the
// per-session budgets, saying what it would take and what to reduce.
func checkBudget(c Config, l Limits, n, q, d int) error {
	e := EstimateConfig(c, n, q, d)
	if l.SessionMemory > 0 && e.Bytes > l.SessionMemory {
		return errorf("this model would need about %s of memory, more than a session may use (%s): use fewer inducing points, fewer or narrower hidden layers, or fewer data", mib(e.Bytes), mib(l.SessionMemory))
	}
	if l.MaxIterTime > 0 && e.IterTime > l.MaxIterTime {
		return errorf("one optimizer iteration of this model would take about %s, more than the limit %s: use fewer inducing points, fewer or narrower hidden layers, or fewer data", e.IterTime.Round(time.Millisecond), l.MaxIterTime)
	}
	return nil
}

func mib(b int64) string { return fmt.Sprintf("%d MiB", (b+(1<<20)-1)>>20) }

// reserve records that session ss now holds a configuration estimated at
// bytes, refusing when all sessions together would exceed the server's
// memory budget. A session's reservation ends when it closes (release).
//
// A page that is here now comes before one that left: when the budget is
// short, the state of disconnected sessions waiting to be resumed (oldest
// disconnect first) is let go to make room. Models parked for a page that
// has not opened yet (an upload, a fork) are kept.
func (s *Server) reserve(ss *session, bytes int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.limits.ServerMemory > 0 {
		total := s.reservedExcept(ss)
		for total+bytes > s.limits.ServerMemory {
			freed, ok := s.evictOldestDisconnected()
			if !ok {
				break
			}
			total -= freed
		}
		if total+bytes > s.limits.ServerMemory {
			return fmt.Errorf("%w: this model would need about %s of memory and the other sessions hold %s of its %s; try a smaller model or later", ErrBusy, mib(bytes), mib(total), mib(s.limits.ServerMemory))
		}
	}
	s.reserved[ss] = bytes
	return nil
}

// ErrBusy is the server refusing a model for want of memory now: a client
// may try again later (websocket close 1013).
var ErrBusy = errors.New("stream: the server is busy")

// busyCloseText is the close reason of a session refused with ErrBusy (a
// close frame's reason holds 123 bytes; the error message before it has
// the numbers).
const busyCloseText = "the server is busy: not enough memory for this model now; try a smaller model or later"

func (s *Server) reservedExcept(ss *session) int64 {
	var total int64
	for other, b := range s.reserved {
		if other != ss {
			total += b
		}
	}
	return total
}

// evictOldestDisconnected forgets the parked state of the session that
// disconnected first and returns the bytes its reservation held, or false
// when there was none. s.mu is held.
func (s *Server) evictOldestDisconnected() (int64, bool) {
	var oldest string
	for token, p := range s.parked {
		if !p.disconnected.IsZero() && (oldest == "" || p.disconnected.Before(s.parked[oldest].disconnected)) {
			oldest = token
		}
	}
	if oldest == "" {
		return 0, false
	}
	p := s.parked[oldest]
	p.timer.Stop()
	freed := s.reserved[p.owner]
	s.forget(oldest, p)
	s.log.Info("let a disconnected session's state go to make room", "disconnected", time.Since(p.disconnected).Round(time.Second))
	return freed, true
}

func (s *Server) release(ss *session) {
	s.mu.Lock()
	delete(s.reserved, ss)
	s.mu.Unlock()
}
