package train

import (
	"fmt"
	"math"
	"testing"

	"dgpviz/internal/engine"

	"gonum.org/v1/gonum/mat"
)

// TestLinearDeepGPsFit: deep GPs with linear layers (all linear, or mixed
// with RBF layers) start from a sensible model and fit. Before the linear
// layers' inducing inputs were put on the coordinate axes at the inputs'
// RMS, `viz fit -data step -hidden 2 -kernel linear` started (and stayed)
// at a bound of −1.56e12: one inducing input at the median of a
// standardised input (≈ 0, where k(x, z) = 0) and a kernel variance of
// 3.6e11 for the resulting zero column. A deep linear GP is still a linear
// model, with extra noise: the one-layer linear GP's −24.29 on the step
// data (measured, `viz fit -kernel linear`) is about the best it can do.
func TestLinearDeepGPsFit(t *testing.T) {
	x, y, _, _ := stepData()
	for _, tc := range []struct {
		hidden        []int
		kernel, input string
		seed          uint64
		least         float64 // bound after 300 iterations (measured −27.0…−19.5; −1.56e12 before)
	}{
		{[]int{2}, "linear", "", 1, -35},
		{[]int{1}, "linear", "", 1, -35},
		{[]int{3}, "linear", "", 2, -35},
		{[]int{1, 1}, "linear", "", 1, -40},
		{[]int{2}, "rbf", "linear", 1, -30},
		{[]int{2}, "linear", "rbf", 1, -30},
	} {
		name := fmt.Sprintf("hidden%v-%s-input-%s-seed%d", tc.hidden, tc.kernel, tc.input, tc.seed)
		t.Run(name, func(t *testing.T) {
			m, err := Initialize(x, y, InitConfig{Hidden: tc.hidden, Kernel: tc.kernel, InputKernel: tc.input, Seed: tc.seed})
			if err != nil {
				t.Fatal(err)
			}
			for i, l := range m.Layers {
				if _, ok := l.Kernel.(*engine.Linear); !ok {
					continue
				}
				p, err := engine.NewLayerPosterior(l, m.Jitter)
				if err != nil {
					t.Fatalf("layer %d: %v", i+1, err)
				}
				// 1e6: far from the jitter-dominated Kuu of a singular
				// design (cond 1e12 and more).
				if c := mat.Cond(p.Kuu, 2); c > 1e6 {
					t.Errorf("layer %d: the initial linear Kuu has condition number %.3g", i+1, c)
				}
			}
			b0 := boundOf(t, m)
			_, rep, err := Fit(t.Context(), m, TrainerConfig{Workers: 1}, FitOptions{MaxIters: 300})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("initial bound %.4g, after %d iterations %.4f (%v)", b0, rep.Iters, rep.Bound, rep.Status)
			if !(rep.Bound > tc.least) || math.IsInf(rep.Bound, 0) {
				t.Errorf("bound %.4g after %d iterations, want > %v", rep.Bound, rep.Iters, tc.least)
			}
			if rep.Status == Stationary && rep.Iters < 5 {
				t.Errorf("stopped as stationary after %d iterations", rep.Iters)
			}
		})
	}
}

// TestLinearScales: an all-zero column and a negligible one are given the
// unit scale; others their RMS.
func TestLinearScales(t *testing.T) {
	in := []float64{ // 3 rows × 3 columns
		1, 0, 1e-9,
		-1, 0, -1e-9,
		1, 0, 1e-9,
	}
	got := linearScales(in, 3, 3)
	if got[0] != 1 || got[1] != 1 || got[2] != 1 {
		t.Errorf("scales %v, want [1 1 1] (RMS 1, zero column, negligible column)", got)
	}
	if got := linearScales([]float64{3, -3}, 2, 1); got[0] != 3 {
		t.Errorf("RMS of ±3: %v", got)
	}
}
