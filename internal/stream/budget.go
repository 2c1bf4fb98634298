package stream

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"time"

	"dgpviz/internal/admit"
	"dgpviz/internal/allviews"
	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
	"dgpviz/internal/train"
	"dgpviz/internal/view"
)

// Budget defaults: a session within every other limit (2,000 rows, six
// layers of width 8, 64 inducing points) was measured at 457 MB and 3
// iterations a second, and sixteen of them at 5.1 GB; these refuse such
// configurations with a clear error instead.
const (
	DefaultSessionMemory = 256 << 20 // bytes one session may be estimated to use
	DefaultServerMemory  = 1 << 30   // bytes all sessions together
	DefaultMaxIterTime   = time.Second
	// sessionStates is how many model-sized states a session keeps besides
	// the optimizer's vectors: the live model, the frame writer's snapshot,
	// the message figure's copy and the state before a drag.
	sessionStates = 4
	// gcHeadroom: the Go heap grows to about twice the live data between
	// collections (GOGC=100), a little more while a collection runs: the
	// peak heap of sessions of 200–800 MiB was 2.1–2.5 times what they
	// held when idle (TestEstimateMatchesHeap).
	gcHeadroom = 2.25
)

// Estimate is what a configuration is expected to cost a session.
type Estimate struct {
	Bytes int64 // heap while it runs, including the undo history and the collector's headroom
	// Build is the heap while its model is built: a view's preset fits
	// restarts side by side (EstimateSession).
	Build    int64
	IterTime time.Duration // one optimizer iteration on one core of a busy machine
}

// EstimateConfig estimates the cost of running configuration c on data set rows
// (n inputs of width q, outputs of width d) from a single start, in a view
// that holds nothing of its own.
func EstimateConfig(c Config, n, q, d int) Estimate { return estimate(c, nil, nil, n, q, d, 0) }

// EstimateSession estimates the cost of a session of configuration c on
// n rows of data set ds (edited, the working rows differ) in the view the
// data's shape chooses: a view with a preset builds its models from
// restarts (view.Arch.Restarts), side by side, and keeps them; a view that
// analyses every row for its frames holds that prediction
// (view.RowAnalyzer).
func EstimateSession(c Config, ds *dataset.Dataset, n, q, d int) Estimate {
	v := allviews.For(ds, nil)
	restarts := 0
	if a, ok := v.Preset(nil); ok {
		restarts = a.Restarts
	}
	return estimate(c, v, ds, n, q, d, restarts)
}

// estimateStarted is EstimateSession for a session that starts from a
// model it is given (a loaded model file, a fork), without restarts.
func estimateStarted(c Config, ds *dataset.Dataset, n, q, d int) Estimate {
	return estimate(c, allviews.For(ds, nil), ds, n, q, d, 0)
}

// perSession is what a session holds whatever its model: its goroutines,
// the socket's buffers, queues, the last frame and setup.
const perSession = 1 << 20

// estimate is the estimate of a session of c on n rows of ds in view v
// (nil: none) that keeps the models of restarts restarts.
func estimate(c Config, v view.View, ds *dataset.Dataset, n, q, d, restarts int) Estimate {
	widths := append(append([]int{q}, c.Hidden...), d)
	// The data are held by the session (its working copy) and by the
	// model, copied once per start (train.Initialize; a preset's restarts
	// each, which it keeps); published snapshots and undo states share
	// them (engine.Model.CloneParams): every other state is parameters.
	data := int64(8 * n * (q + d))
	copies := int64(1 + max(1, restarts))
	params := engine.ModelBytes(n, widths, c.Inducing) - data
	history := min(int64(maxHistory)*params, maxHistoryBytes) // undo states, when a person has made that many edits
	kept := int64(restarts) * params                          // the restarts' models
	var analysis int64
	if ra, ok := v.(view.RowAnalyzer); ok && ds != nil {
		analysis = engine.EstimatePredict(ra.AnalyzedRows(ds), widths, c.Inducing)
	}
	// The trainer's evaluators and vectors (the second evaluation of the
	// bound alone is the publisher's, of a model the optimizer has not
	// evaluated: after an edit).
	it := train.EstimateIter(liveMethod(c, n), n, widths, c.Inducing, params)
	cost := it.Full
	live := perSession + it.Evals + copies*data + sessionStates*params + it.Vectors + history + kept + analysis
	e := Estimate{
		Bytes:    int64(gcHeadroom * float64(live)),
		IterTime: it.Time,
	}
	e.Build = e.Bytes
	if restarts > 1 {
		// Restarts fit side by side (train.FitRestarts: as many as there
		// are cores), each with its own evaluator, optimizer and copy of
		// the data; then one more evaluator scores them.
		par := int64(min(restarts, runtime.GOMAXPROCS(0)))
		build := perSession + copies*data + par*(cost.Bytes+it.Vectors) + kept + cost.Bytes
		e.Build = max(e.Bytes, int64(gcHeadroom*float64(build)))
	}
	return e
}

// checkBudget refuses a configuration whose estimate exceeds the
// per-session budgets, saying what it would take and what to reduce.
func checkBudget(e Estimate, l Limits) error {
	if l.SessionMemory > 0 && e.Bytes > l.SessionMemory {
		return fmt.Errorf("this model would need about %s of memory, more than a session may use (%s): use fewer inducing points, fewer or narrower hidden layers, or fewer data (the server's -session-memory raises the limit)", mib(e.Bytes), mib(l.SessionMemory))
	}
	if l.MaxIterTime > 0 && e.IterTime > l.MaxIterTime {
		return fmt.Errorf("one optimizer iteration of this model would take about %s, more than the limit %s: use fewer inducing points, fewer or narrower hidden layers, or fewer data (the server's -max-iter-time raises the limit)", e.IterTime.Round(time.Millisecond), l.MaxIterTime)
	}
	return nil
}

// estimateNow is what s holds with configuration c on n rows of its data:
// with the models of its restarts, when it keeps them.
func (s *session) estimateNow(c Config, n, q, d int) Estimate {
	k := 0
	if s.restarts != nil {
		k = len(s.restarts.List)
	}
	return estimate(c, s.view, s.data.Set, n, q, d, k)
}

// grow checks that s may hold configuration c on n rows of its data and
// reserves it, before the memory is taken: every way a session grows
// (data edits, undo and redo of them) asks here first.
func (s *session) grow(c Config, n, q, d int) error {
	e := s.estimateNow(c, n, q, d)
	if err := checkBudget(e, s.srv.limits); err != nil {
		return err
	}
	return s.srv.reserve(s, e.Bytes)
}

// reservation returns ss's reservation.
func (s *Server) reservation(ss *session) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reserved[ss]
}

// setReservation makes ss's reservation bytes without checking the
// budget: for a reservation that shrinks, or one given back as it was.
func (s *Server) setReservation(ss *session, bytes int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if prev := s.reserved[ss]; prev > bytes {
		s.freed(prev - bytes)
	}
	s.reserved[ss] = bytes
}

func mib(b int64) string { return fmt.Sprintf("%d MiB", (b+(1<<20)-1)>>20) }

// reserve records that session ss now holds a configuration estimated at
// bytes, refusing when all sessions together would exceed the server's
// memory budget. A session's reservation ends when it closes (release).
//
// A page that is here now comes before parked state: when the budget is
// short, parked state is let go to make room — disconnected sessions
// waiting to be resumed, uploads and forks waiting for their page — first
// that of the client that has the most parked, its oldest first, so that
// one client's flood of uploads is what goes, not another's session.
func (s *Server) reserve(ss *session, bytes int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if share := s.clientShare(); share > 0 && ss.client != "" && ss.client != admit.ServerClient {
		// One client's share first, making room from its own parked state.
		held := s.clientReserved(ss.client, ss)
		for held+bytes > share {
			freed, ok := s.evictParkedOf(ss, ss.client)
			if !ok {
				break
			}
			held -= freed
		}
		if held+bytes > share {
			return fmt.Errorf("%w: this model would need about %s of memory and your other sessions and uploads hold %s of the %s one client may use; close another tab, or try a smaller model", ErrBusy, mib(bytes), mib(held), mib(share))
		}
	}
	if s.limits.ServerMemory > 0 {
		total := s.reservedExcept(ss)
		for total+bytes > s.limits.ServerMemory {
			freed, ok := s.evictParked(ss)
			if !ok {
				break
			}
			total -= freed
		}
		if total+bytes > s.limits.ServerMemory {
			return fmt.Errorf("%w: this model would need about %s of memory and the other sessions hold %s of its %s; try a smaller model or later", ErrBusy, mib(bytes), mib(total), mib(s.limits.ServerMemory))
		}
	}
	if prev := s.reserved[ss]; prev > bytes {
		s.freed(prev - bytes)
	}
	s.reserved[ss] = bytes
	return nil
}

// ErrBusy is the server refusing a model for want of memory now: a client
// may try again later (websocket close 1013).
var ErrBusy = errors.New("the server is busy")

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

// clientShare is the memory one client may hold (0: no bound): half the
// server's budget, and at least what one session may use.
func (s *Server) clientShare() int64 {
	if s.limits.ServerMemory <= 0 {
		return 0
	}
	return max(s.limits.ServerMemory/2, s.limits.SessionMemory)
}

// clientReserved is what client's sessions, parked state and uploads hold
// but ss. s.mu is held.
func (s *Server) clientReserved(client string, ss *session) int64 {
	var total int64
	for other, b := range s.reserved {
		if other != ss && other.client == client {
			total += b
		}
	}
	return total
}

// evictParked lets go of one piece of parked state to make room for ss
// (never ss's own): the oldest of the client that holds the most parked
// bytes. It returns the bytes freed, or false when there was none. s.mu
// is held.
func (s *Server) evictParked(ss *session) (int64, bool) { return s.evictParkedOf(ss, "") }

// evictParkedOf is evictParked among client's parked state ("": anyone's).
func (s *Server) evictParkedOf(ss *session, client string) (int64, bool) {
	held := map[string]int64{}
	for _, p := range s.parked {
		if p.owner != ss {
			held[p.client] += s.reserved[p.owner]
		}
	}
	var victim string
	for token, p := range s.parked {
		if p.owner == ss || client != "" && p.client != client {
			continue
		}
		if victim == "" {
			victim = token
			continue
		}
		v := s.parked[victim]
		if hp, hv := held[p.client], held[v.client]; hp > hv || hp == hv && p.parkedAt.Before(v.parkedAt) {
			victim = token
		}
	}
	if victim == "" {
		return 0, false
	}
	return s.let(victim, "to make room for a page that is here"), true
}

func (s *Server) release(ss *session) {
	s.mu.Lock()
	s.freed(s.reserved[ss])
	delete(s.reserved, ss)
	s.mu.Unlock()
}

// Returning memory to the system. Go gives freed heap back to the
// operating system slowly (a background scavenger): after the hardening
// campaign's upload bombs the server's RSS took 9 minutes to come down.
// When reservations of at least freeAfter have ended, the server collects
// and returns the memory at once (debug.FreeOSMemory, a full collection),
// at most every freeEvery, on a goroutine of its own.
const (
	freeAfter = 64 << 20
	freeEvery = 2 * time.Second
)

// freed notes that reservations of bytes have ended. s.mu is held.
func (s *Server) freed(bytes int64) {
	if bytes <= 0 || !s.returnMemory {
		return
	}
	s.toFree += bytes
	if s.freeing || s.toFree < freeAfter {
		return
	}
	s.freeing, s.toFree = true, 0
	go func() {
		for {
			debug.FreeOSMemory()
			time.Sleep(freeEvery)
			s.mu.Lock()
			again := s.toFree >= freeAfter
			s.freeing, s.toFree = again, 0
			s.mu.Unlock()
			if !again {
				return
			}
		}
	}()
}

// MemoryLimit returns the Go memory limit (debug.SetMemoryLimit) that
// makes real memory follow the server's budget: its memory budget with a
// fifth more for what no reservation counts (frames being encoded, the
// runtime's own), so that the collector works harder as the heap nears
// the budget rather than letting it grow to twice the live data. ok is
// false when there is no budget, or when env (the GOMEMLIMIT environment
// variable) already sets one.
func MemoryLimit(l Limits, env string) (int64, bool) {
	if l.ServerMemory <= 0 || env != "" {
		return 0, false
	}
	return l.ServerMemory + l.ServerMemory/5, true
}
