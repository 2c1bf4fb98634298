package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"
)

// TestEstimateCostMatchesHeap builds models of several shapes, evaluates
// the bound and gradient, and compares the heap the Evaluator and its
// results hold with EstimateCost's bytes. The band [0.5, 2] is what an
// admission estimate needs (refusing 457 MB sessions, not counting bytes).
func TestEstimateCostMatchesHeap(t *testing.T) {
	if testing.Short() {
		t.Skip("builds large models: not in the short tier")
	}
	for _, tc := range []struct {
		n      int
		widths []int
		m      int
	}{
		{30, []int{1, 1, 1, 1}, 12},              // the step demo
		{215, []int{1, 3, 3, 30}, 20},            // the robot preset
		{2000, []int{1, 8, 1}, 64},               // a large one-hidden-layer model
		{2000, []int{1, 8, 8, 8, 1}, 64},         // deeper
		{2000, []int{8, 8, 8, 8, 8, 8}, 32},      // wide everywhere
		{1965, []int{560, 2, 560}, 15},           // the Frey faces' autoencoder: certain 560-D inputs
		{2000, []int{1, 3, 3, 460}, 15},          // 460 outputs
		{2 * ChunkAbove, []int{1, 3, 3, 30}, 15}, // the robot's shape in chunks
	} {
		t.Run(fmt.Sprintf("n%d-%v-m%d", tc.n, tc.widths, tc.m), func(t *testing.T) {
			kernels := make([]string, len(tc.widths)-1)
			for i := range kernels {
				kernels[i] = "rbf"
			}
			model := RandomModel(rand.New(rand.NewPCG(1, 1)), tc.n, tc.widths, kernels, tc.m)
			// Above ChunkAbove rows, in chunks, as the trainer evaluates.
			eval := func(opt Options) func() any {
				return func() any {
					e := &Evaluator{Workers: 2}
					var res *Result
					var g *Gradient
					var err error
					if tc.n > ChunkAbove {
						res, g, err = e.EvaluateChunked(model, opt, DefaultChunkRows)
					} else {
						res, g, err = e.Evaluate(model, opt)
					}
					if err != nil {
						t.Fatal(err)
					}
					return []any{e, res, g}
				}
			}
			est := EstimateCost(tc.n, tc.widths, tc.m)
			// What the heap holds after an evaluation, against the
			// estimate; measured up to three times, since memory that
			// earlier tests left for the collector can be freed during a
			// measurement (under the race detector it once made it −2.6 MB).
			check := func(what string, f func() any, want int64) {
				var held, ratio float64
				for range 3 {
					held = float64(liveAfter(f))
					if ratio = held / float64(want); ratio >= 0.5 && ratio <= 2 {
						break
					}
				}
				t.Logf("%s: held %.2f MB, estimated %.2f MB (ratio %.2f), %.3g flops", what, held/1e6, float64(want)/1e6, ratio, est.Flops)
				if tc.n >= 200 && (ratio < 0.5 || ratio > 2) {
					t.Errorf("%s: the heap held %.2f MB, the estimate says %.2f MB", what, held/1e6, float64(want)/1e6)
				}
			}
			check("bound and gradient", eval(Options{Gradient: true}), est.Bytes)
			// The bound alone (a publisher's evaluation of an edited
			// model): no gradient.
			check("the bound alone", eval(Options{NoOutputMessage: true}), est.Forward)
		})
	}
}

// settleHeap collects until the heap stops shrinking (at most ten
// times): a sync.Pool's buffers (the engine's scratch) survive one
// collection in its victim cache, and what an earlier evaluator's cleanup
// releases (its helper goroutines' team) is freed a collection after the
// cleanup runs; freed during a measurement they would count against what
// the measured evaluation holds (earlier tests' leftovers made it
// negative).
func settleHeap() {
	var m runtime.MemStats
	last := uint64(math.MaxUint64)
	for range 10 {
		runtime.GC()
		time.Sleep(time.Millisecond) // for cleanups and finalizers to run
		runtime.ReadMemStats(&m)
		if m.HeapAlloc >= last {
			return
		}
		last = m.HeapAlloc
	}
}
