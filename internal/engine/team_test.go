package engine

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestTeamRunsEveryTaskOnce: every task of every region runs exactly once,
// whether the helpers are spinning, parked (after idling longer than
// spinSpan), gone (after idleExit) or busy with another goroutine's
// region; and idle helpers exit, leaving no goroutine behind.
func TestTeamRunsEveryTaskOnce(t *testing.T) {
	before := runtime.NumGoroutine()
	for _, helpers := range []int{1, 3} {
		tm := newTeam(helpers)
		tm.ensure()
		check := func(tasks int) {
			counts := make([]atomic.Int32, tasks)
			if !tm.run(tasks, func(i int) { counts[i].Add(1) }) {
				serialFor(tasks, func(i int) { counts[i].Add(1) })
			}
			for i := range counts {
				if c := counts[i].Load(); c != 1 {
					t.Fatalf("helpers=%d tasks=%d: task %d ran %d times", helpers, tasks, i, c)
				}
			}
		}
		for tasks := 1; tasks <= 40; tasks++ {
			check(tasks)
		}
		// Idle longer than spinSpan: the helpers park, and must wake.
		time.Sleep(3 * spinSpan)
		check(17)
		// Idle longer than idleExit: the helpers have exited, and the
		// caller does the work alone until ensure restarts them.
		time.Sleep(2 * idleExit)
		if n := tm.alive.Load(); n != 0 {
			t.Errorf("helpers=%d: %d helpers alive after idling %v", helpers, n, 2*idleExit)
		}
		check(13)
		tm.ensure()
		check(11)
		// Two goroutines submitting at once: one runs on the team, the
		// other is told to run its tasks itself.
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for range 50 {
					check(9)
				}
			})
		}
		wg.Wait()
	}
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines after the helpers idled out, %d before", n, before)
	}
}

// TestTeamUsesHelpers: a region of slow tasks is shared with the helper
// rather than run by the caller alone.
func TestTeamUsesHelpers(t *testing.T) {
	tm := newTeam(1)
	tm.ensure()
	var caller, helper atomic.Int32
	var callerID atomic.Int64
	callerID.Store(goid())
	tm.run(8, func(int) {
		if goid() == callerID.Load() {
			caller.Add(1)
		} else {
			helper.Add(1)
		}
		time.Sleep(5 * time.Millisecond)
	})
	if helper.Load() == 0 {
		t.Errorf("the helper ran none of 8 tasks of 5 ms (caller ran %d)", caller.Load())
	}
}

// goid identifies the calling goroutine by its stack header, for the test
// only.
func goid() int64 {
	buf := make([]byte, 32)
	buf = buf[:runtime.Stack(buf, false)]
	var id int64
	for _, c := range buf[len("goroutine "):] {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + int64(c-'0')
	}
	return id
}
