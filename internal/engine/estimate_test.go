package engine

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
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
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			// Above ChunkAbove rows, in chunks, as the trainer evaluates.
			eval := func(e *Evaluator, opt Options) (*Result, *Gradient, error) {
				if tc.n > ChunkAbove {
					return e.EvaluateChunked(model, opt, DefaultChunkRows)
				}
				return e.Evaluate(model, opt)
			}
			e := &Evaluator{Workers: 2}
			res, g, err := eval(e, Options{Gradient: true})
			if err != nil {
				t.Fatal(err)
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			held := float64(after.HeapAlloc) - float64(before.HeapAlloc)
			runtime.KeepAlive(e)
			runtime.KeepAlive(res)
			runtime.KeepAlive(g)
			est := EstimateCost(tc.n, tc.widths, tc.m)
			ratio := held / float64(est.Bytes)
			t.Logf("held %.2f MB, estimated %.2f MB (ratio %.2f), %.3g flops", held/1e6, float64(est.Bytes)/1e6, ratio, est.Flops)
			if tc.n >= 200 && (ratio < 0.5 || ratio > 2) {
				t.Errorf("the heap held %.2f MB, the estimate says %.2f MB", held/1e6, float64(est.Bytes)/1e6)
			}
			// The bound alone (a publisher's evaluation of an edited
			// model): no gradient.
			runtime.GC()
			runtime.ReadMemStats(&before)
			f := &Evaluator{Workers: 2}
			resF, _, err := eval(f, Options{NoOutputMessage: true})
			if err != nil {
				t.Fatal(err)
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			heldF := float64(after.HeapAlloc) - float64(before.HeapAlloc)
			runtime.KeepAlive(f)
			runtime.KeepAlive(resF)
			ratioF := heldF / float64(est.Forward)
			t.Logf("bound alone: held %.2f MB, estimated %.2f MB (ratio %.2f)", heldF/1e6, float64(est.Forward)/1e6, ratioF)
			if tc.n >= 200 && (ratioF < 0.5 || ratioF > 2) {
				t.Errorf("the bound alone held %.2f MB, the estimate says %.2f MB", heldF/1e6, float64(est.Forward)/1e6)
			}
		})
	}
}
