package engine

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// team is a set of helper goroutines that stay for one evaluation and take
// part in its parallel regions. Starting goroutines for every region cost
// about 75 µs per region on the 2-vCPU VM this was measured on (the time
// to wake a parked thread), for some 19 regions per evaluation of the
// robot model: the helper joined each region late, and two workers ran
// little faster than one. A helper that waits by spinning, yielding to
// any other goroutine, joins within microseconds; after spinSpan without
// work it parks until the next region.
type team struct {
	helpers int
	cur     atomic.Pointer[region]
	busy    sync.Mutex // one region at a time; see run
	parked  atomic.Int32
	wake    chan struct{}
	quit    atomic.Bool
	done    sync.WaitGroup
}

// spinSpan is how long an idle helper spins before it parks: longer than
// the serial stretches between one evaluation's regions.
const spinSpan = 200 * time.Microsecond

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

func startTeam(helpers int) *team {
	t := &team{helpers: helpers, wake: make(chan struct{}, helpers)}
	t.done.Add(helpers)
	for range helpers {
		go t.helper()
	}
	return t
}

// stop ends the helpers. No region may run at the same time or after.
func (t *team) stop() {
	t.quit.Store(true)
	close(t.wake)
	t.done.Wait()
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
	defer t.done.Done()
	var seen *region
	var idle time.Time
	for spins := 0; ; spins++ {
		if t.quit.Load() {
			return
		}
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
			t.parked.Add(1)
			if t.cur.Load() == seen && !t.quit.Load() {
				if _, ok := <-t.wake; !ok {
					t.parked.Add(-1)
					return
				}
			}
			t.parked.Add(-1)
			spins = -1
			continue
		}
		runtime.Gosched()
	}
}
