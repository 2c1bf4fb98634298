package engine

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// team is a set of helper goroutines that take part in an Evaluator's
// parallel regions. Starting goroutines for every region cost about 75 µs
// per region on the 2-vCPU VM this was measured on (the time to wake a
// parked thread; a fresh goroutine took 230 µs to start), for some 19
// regions per evaluation of the robot model: the helpers joined late and
// two workers ran little faster than one. A helper that waits by spinning,
// yielding to any other goroutine, joins within microseconds. It spins for
// spinSpan after its last region, which covers the gap between an
// optimizer's evaluations, then parks; after idleExit parked it exits, so
// an Evaluator that is dropped leaves nothing running.
type team struct {
	helpers int
	cur     atomic.Pointer[region]
	busy    sync.Mutex // one region at a time; see run
	parked  atomic.Int32
	alive   atomic.Int32
	wake    chan struct{}
}

const (
	// spinSpan is how long an idle helper spins before it parks.
	spinSpan = 300 * time.Microsecond
	// idleExit is how long a parked helper waits before it exits.
	idleExit = 50 * time.Millisecond
)

// region is one parallel loop: tasks 0…tasks−1 handed out in order.
type region struct {
	fn     func(task int)
	tasks  int64
	next   atomic.Int64
	active atomic.Int32 // workers inside; once 0 it stays 0
}

func (r *region) work() {
	for {
		t := r.next.Add(1) - 1
		if t >= r.tasks {
			return
		}
		r.fn(int(t))
	}
}

// join enters the region unless it is already closed.
func (r *region) join() bool {
	for {
		a := r.active.Load()
		if a == 0 {
			return false
		}
		if r.active.CompareAndSwap(a, a+1) {
			return true
		}
	}
}

func newTeam(helpers int) *team {
	return &team{helpers: helpers, wake: make(chan struct{}, helpers)}
}

// ensure restarts helpers that have exited since the last call.
func (t *team) ensure() {
	for t.alive.Load() < int32(t.helpers) {
		t.alive.Add(1)
		go t.helper()
	}
}

// run calls fn(0), …, fn(tasks−1) on the caller and the helpers, and
// reports false, having done nothing, when another goroutine's region is
// running: the cores are busy then, and the caller should run its tasks
// itself.
func (t *team) run(tasks int, fn func(task int)) bool {
	if !t.busy.TryLock() {
		return false
	}
	defer t.busy.Unlock()
	r := &region{fn: fn, tasks: int64(tasks)}
	r.active.Store(1)
	t.cur.Store(r)
	// A helper that parks counts itself in parked and then checks cur
	// again, so either it sees r or this sees it parked.
	if t.parked.Load() > 0 {
		for range t.helpers {
			select {
			case t.wake <- struct{}{}:
			default:
			}
		}
	}
	r.work()
	r.active.Add(-1)
	// Only helpers that joined, and are running, are waited for.
	for r.active.Load() != 0 {
		runtime.Gosched()
	}
	return true
}

func (t *team) helper() {
	defer t.alive.Add(-1)
	// seen starts nil: a region published before this helper started is
	// joined if it is still open.
	var seen *region
	var idle time.Time
	for spins := 0; ; spins++ {
		if r := t.cur.Load(); r != seen {
			seen = r
			if r.join() {
				r.work()
				r.active.Add(-1)
			}
			spins = -1 // 0 after the loop's increment: idle starts now
			continue
		}
		switch {
		case spins == 0:
			idle = time.Now()
		case spins%64 == 0 && time.Since(idle) > spinSpan:
			if !t.park(seen) {
				return
			}
			spins = -1
			continue
		}
		runtime.Gosched()
	}
}

// park waits for a region other than seen, and reports false when none
// came for idleExit.
func (t *team) park(seen *region) bool {
	t.parked.Add(1)
	defer t.parked.Add(-1)
	if t.cur.Load() != seen {
		return true
	}
	timer := time.NewTimer(idleExit)
	defer timer.Stop()
	select {
	case <-t.wake:
		return true
	case <-timer.C:
		return false
	}
}
