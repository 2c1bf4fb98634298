package view

import (
	"slices"
	"sync"
	"time"

	"dgpviz/internal/engine"
)

// Analysis runs a view's analysis of the model — the part of a frame that
// the optimizer's evaluation does not give and that costs too much for
// every frame (test-set predictions, geometry scores) — at most every
// Every while the optimizer runs, in the background, and at once when the
// frame shows a command's effect, when paused and after a new
// architecture. One connection's writer uses it; a background analysis
// runs on a goroutine of its own.
//
// With Background set, an analysis runs on the caller's goroutine only
// for a paused state (once per state: no later frame would bring a
// background analysis of it, since frames follow new states): one that
// costs seconds (every row of a large data set) must not hold up a
// running fit's frames. Current then returns nil until the first
// analysis finishes, and a command's effect or a new architecture start
// a new background analysis (once the running one ends) instead of
// waiting for one.
type Analysis[T any] struct {
	Every      time.Duration
	Background bool

	mu       sync.Mutex
	latest   *Analyzed[T] // newest finished analysis
	busy     bool         // a background analysis is running
	started  time.Time    // start of the last analysis
	nextSeq  uint64
	version  uint64         // Snapshot.Version of the latest (Background)
	dims     []int          // layer shapes of the latest analysis: an architecture change analyses at once
	inFlight sync.WaitGroup // background analyses (tests wait on it)
}

// Analyzed is one analysis and the snapshot it is of.
type Analyzed[T any] struct {
	Value   T
	Iter    int    // the iteration it analysed
	Applied int64  // the last command applied then
	Seq     uint64 // increases with every analysis
}

// Current returns the analysis to send with a frame of s: computed now
// when the frame shows a command's effect, when paused, or after an
// architecture change; otherwise the newest background analysis, starting
// a new one when it is older than Every.
func (a *Analysis[T]) Current(s *Snapshot, analyze func(*Snapshot) T) *Analyzed[T] {
	a.mu.Lock()
	defer a.mu.Unlock()
	dims := layerDims(s.Model)
	l := a.latest
	changed := l == nil || !s.Running || s.Applied != l.Applied || s.Iter < l.Iter || !slices.Equal(dims, a.dims)
	if a.Background {
		fresh := l != nil && s.Version == a.version
		switch {
		case !s.Running && !fresh: // paused: analyse the state shown once, not every frame
		case !fresh && !a.busy && (l == nil || changed || time.Since(a.started) >= a.Every && s.Iter > l.Iter):
			a.start(s, dims, analyze)
			return l
		default:
			return l
		}
	}
	if changed {
		a.started = time.Now()
		a.nextSeq++
		a.latest, a.dims, a.version = &Analyzed[T]{Value: analyze(s), Iter: s.Iter, Applied: s.Applied, Seq: a.nextSeq}, dims, s.Version
		return a.latest
	}
	if !a.busy && time.Since(a.started) >= a.Every && s.Iter > l.Iter {
		a.start(s, dims, analyze)
	}
	return l
}

// start analyses s on a goroutine of its own; a.mu is held.
func (a *Analysis[T]) start(s *Snapshot, dims []int, analyze func(*Snapshot) T) {
	a.busy, a.started = true, time.Now()
	a.inFlight.Add(1)
	go func() {
		defer a.inFlight.Done()
		v := analyze(s)
		a.mu.Lock()
		defer a.mu.Unlock()
		a.busy = false
		// An analysis of a newer state made at once may have finished first.
		newer := a.latest == nil || a.latest.Iter <= s.Iter && a.latest.Applied == s.Applied && slices.Equal(dims, a.dims)
		if a.Background {
			newer = a.latest == nil || s.Version >= a.version
		}
		if newer {
			a.nextSeq++
			a.latest, a.dims, a.version = &Analyzed[T]{Value: v, Iter: s.Iter, Applied: s.Applied, Seq: a.nextSeq}, dims, s.Version
		}
	}()
}

// Wait waits for background analyses in flight (for tests).
func (a *Analysis[T]) Wait() { a.inFlight.Wait() }

func layerDims(m *engine.Model) []int {
	var out []int
	for _, l := range m.Layers {
		a, b, c := l.Dims()
		out = append(out, a, b, c)
	}
	return out
}
