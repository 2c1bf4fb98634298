package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestGradientFiniteDifferences checks the analytic gradient of the bound
// against central finite differences for every parameter, with the
// assembly kernels and with the portable Go code.
func TestGradientFiniteDifferences(t *testing.T) {
	forEachKernelPath(t, testGradientFiniteDifferences)
}

func testGradientFiniteDifferences(t *testing.T) {
	cases := []struct {
		widths  []int
		kernels []string
		m       int
	}{
		{[]int{1, 1}, []string{"rbf"}, 4},
		{[]int{2, 2}, []string{"linear"}, 3},
		{[]int{1, 2, 1}, []string{"rbf", "rbf"}, 4},
		{[]int{1, 3, 2, 2}, []string{"rbf", "rbf", "rbf"}, 5},
		{[]int{2, 2, 3}, []string{"linear", "rbf"}, 4},
		{[]int{1, 2, 2}, []string{"rbf", "linear"}, 3},
		{[]int{1, 2, 2, 2, 1}, []string{"rbf", "rbf", "linear", "rbf"}, 3},
		// The isotropic RBF on a certain input (its own ψ1 gradient), on an
		// uncertain one (the ARD loops, folded) and as an autoencoder.
		{[]int{3, 2}, []string{"rbfiso"}, 4},
		{[]int{2, 2, 1}, []string{"rbf", "rbfiso"}, 4},
		{[]int{4, 2, 4}, []string{"rbfiso", "rbfiso"}, 4},
	}
	for ci, tc := range cases {
		t.Run(fmt.Sprint(tc.widths, tc.kernels), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(ci), 7))
			m := RandomModel(rng, 9, tc.widths, tc.kernels, tc.m)
			_, g := mustEval(t, m, Options{Gradient: true})
			analytic := g.Flatten(nil)
			p := m.Params(nil)
			layout := m.ParamLayout()
			for k := range p {
				h := 1e-3 * math.Max(1, math.Abs(p[k]))
				f := func(v float64) float64 {
					q := append([]float64(nil), p...)
					q[k] = v
					mm := m.Clone()
					mm.SetParams(q)
					r, _ := mustEval(t, mm, Options{})
					return r.Bound
				}
				fd := centralDiff4(f, p[k], h)
				if err := math.Abs(fd-analytic[k]) / math.Max(1, math.Abs(fd)); err > 1e-6 {
					t.Errorf("param %d (layer %d %v): analytic %.10g, finite difference %.10g (rel err %.2g)", k, layout[k].Layer, layout[k].Group, analytic[k], fd, err)
				}
			}
		})
	}
}

// centralDiff4 is f's derivative at x by the fourth-order central
// difference with step h: truncation error O(h⁴).
func centralDiff4(f func(float64) float64, x, h float64) float64 {
	return (8*(f(x+h)-f(x-h)) - (f(x+2*h) - f(x-2*h))) / (12 * h)
}
