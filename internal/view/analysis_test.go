package view

import (
	"sync/atomic"
	"testing"

	"dgpviz/internal/engine"

	"gonum.org/v1/gonum/mat"
)

// TestBackgroundAnalysis: a background analysis never runs on the
// caller's goroutine while the fit runs (Current returns nil, then the
// finished analysis), and runs there once for a paused state.
func TestBackgroundAnalysis(t *testing.T) {
	m := &engine.Model{X: mat.NewDense(1, 1, nil)}
	var calls atomic.Int64
	release := make(chan struct{})
	analyze := func(s *Snapshot) int {
		calls.Add(1)
		if s.Running {
			<-release // a slow analysis: the caller must not wait for it
		}
		return s.Iter
	}
	a := &Analysis[int]{Background: true}
	run := &Snapshot{Model: m, Running: true, Iter: 1, Version: 1}
	if got := a.Current(run, analyze); got != nil {
		t.Fatalf("the first background analysis came at once: %+v", got)
	}
	if got := a.Current(run, analyze); got != nil {
		t.Fatal("a second call came with an analysis while the first runs")
	}
	close(release)
	a.Wait()
	if got := a.Current(run, analyze); got == nil || got.Value != 1 || calls.Load() != 1 {
		t.Fatalf("after the analysis: %+v, %d calls, want iteration 1 and 1 call", got, calls.Load())
	}
	paused := &Snapshot{Model: m, Iter: 2, Version: 2}
	for range 3 {
		if got := a.Current(paused, analyze); got == nil || got.Value != 2 {
			t.Fatalf("paused: %+v, want iteration 2's analysis at once", got)
		}
	}
	if calls.Load() != 2 {
		t.Fatalf("%d analyses, want 2: a paused state is analysed once", calls.Load())
	}
}
