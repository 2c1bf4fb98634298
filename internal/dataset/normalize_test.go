package dataset

import (
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestNormalizer(t *testing.T) {
	for _, c := range []struct {
		name      string
		a         *mat.Dense
		mean, std []float64 // expected, computed by hand
	}{
		{
			// Column 0: 1, 2, 3, 4: mean 2.5, population sd √1.25.
			// Column 1: constant 7: mean 7, scale 1.
			// Column 2: -10, 10, -10, 10: mean 0, sd 10.
			name: "mixed",
			a:    mat.NewDense(4, 3, []float64{1, 7, -10, 2, 7, 10, 3, 7, -10, 4, 7, 10}),
			mean: []float64{2.5, 7, 0},
			std:  []float64{math.Sqrt(1.25), 1, 10},
		},
		{
			// 0.1 three times: the computed mean, 0.30000000000000004/3,
			// is not exactly 0.1, yet the column is constant: scale 1.
			name: "constant with rounding",
			a:    mat.NewDense(3, 1, []float64{0.1, 0.1, 0.1}),
			mean: []float64{0.1},
			std:  []float64{1},
		},
		{
			// One row: every column is constant.
			name: "single row",
			a:    mat.NewDense(1, 2, []float64{5, -3}),
			mean: []float64{5, -3},
			std:  []float64{1, 1},
		},
		{
			// Values near the float64 maximum: naive squaring of the
			// deviations (1e308)² would overflow. sd = 1e308.
			name: "huge",
			a:    mat.NewDense(2, 1, []float64{-1e308, 1e308}),
			mean: []float64{0},
			std:  []float64{1e308},
		},
		{
			// Large offset, small spread: 1e9 ± 1 has sd 1.
			name: "offset",
			a:    mat.NewDense(2, 1, []float64{1e9 - 1, 1e9 + 1}),
			mean: []float64{1e9},
			std:  []float64{1},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := FitNormalizer(c.a)
			for j := range c.mean {
				if !near(n.Mean[j], c.mean[j], 1e-12) || !near(n.Scale[j], c.std[j], 1e-12) {
					t.Errorf("column %d: mean, scale = %v, %v; want %v, %v", j, n.Mean[j], n.Scale[j], c.mean[j], c.std[j])
				}
			}
			z := n.Apply(c.a)
			r, cols := z.Dims()
			for j := range cols {
				orig := mat.Col(nil, j, c.a)
				col := mat.Col(nil, j, z)
				if slices.Min(orig) == slices.Max(orig) {
					// A constant column is centred exactly to zero.
					for i, v := range col {
						if v != 0 {
							t.Errorf("constant column %d: standardised [%d] = %v, want 0", j, i, v)
						}
					}
					continue
				}
				var sum, ss float64
				for _, v := range col {
					sum += v
					ss += v * v
				}
				mean := sum / float64(r)
				if sd := math.Sqrt(ss/float64(r) - mean*mean); math.Abs(mean) > 1e-12 || !near(sd, 1, 1e-12) {
					t.Errorf("column %d: standardised mean, sd = %v, %v; want 0, 1", j, mean, sd)
				}
			}
			// Apply then UndoMean is the identity to 1e-12 (relative).
			back := n.UndoMean(z)
			for i := range r {
				for j := range cols {
					if !near(back.At(i, j), c.a.At(i, j), 1e-12) {
						t.Errorf("round trip [%d,%d] = %v, want %v", i, j, back.At(i, j), c.a.At(i, j))
					}
				}
			}
		})
	}
}

// near reports whether a and b agree to tol, relative to max(1, |a|, |b|).
func near(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

func TestNormalizerUndoVar(t *testing.T) {
	// Scales 2 and 0.5 (fixed by hand): variances scale by 4 and 0.25.
	n := Normalizer{Mean: []float64{10, -1}, Scale: []float64{2, 0.5}}
	v := mat.NewDense(2, 2, []float64{1, 1, 0.5, 8})
	got := n.UndoVar(v)
	want := mat.NewDense(2, 2, []float64{4, 0.25, 2, 2})
	if !mat.EqualApprox(got, want, 1e-15) {
		t.Errorf("UndoVar = %v, want %v", mat.Formatted(got), mat.Formatted(want))
	}
	// The means play no part, and the input is not modified.
	if v.At(0, 0) != 1 {
		t.Error("UndoVar modified its argument")
	}
}

func TestNormalizerDoesNotModify(t *testing.T) {
	a := mat.NewDense(2, 1, []float64{1, 3})
	n := FitNormalizer(a)
	z := n.Apply(a)
	if a.At(0, 0) != 1 || a.At(1, 0) != 3 {
		t.Error("Apply modified its argument")
	}
	// mean 2, sd 1: z = -1, 1.
	if z.At(0, 0) != -1 || z.At(1, 0) != 1 {
		t.Errorf("Apply = %v, want [-1 1]", mat.Formatted(z.T()))
	}
	if n.UndoMean(z) == z {
		t.Error("UndoMean must return a new matrix")
	}
}

func TestNormalizerNil(t *testing.T) {
	n := FitNormalizer(nil)
	if len(n.Mean) != 0 || len(n.Scale) != 0 {
		t.Errorf("FitNormalizer(nil) = %+v, want zero", n)
	}
	if FitNormalizer(&mat.Dense{}).Mean != nil {
		t.Error("FitNormalizer(empty) should be zero")
	}
	m := FitNormalizer(mat.NewDense(2, 1, []float64{1, 2}))
	if m.Apply(nil) != nil || m.UndoMean(nil) != nil || m.UndoVar(nil) != nil {
		t.Error("nil in should give nil out (for absent test sets)")
	}
}

func TestNormalizerShapePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Apply with the wrong number of columns did not panic")
		}
	}()
	FitNormalizer(mat.NewDense(2, 1, []float64{1, 2})).Apply(mat.NewDense(2, 2, nil))
}

// TestZeroNormalizerIsIdentity: the zero Normalizer copies its input.
func TestZeroNormalizerIsIdentity(t *testing.T) {
	a := mat.NewDense(2, 2, []float64{1, 2, 3, 4})
	var n Normalizer
	for _, got := range []*mat.Dense{n.Apply(a), n.UndoMean(a), n.UndoVar(a)} {
		if !mat.Equal(got, a) || got == a {
			t.Errorf("zero Normalizer gave %v, want a copy of %v", mat.Formatted(got), mat.Formatted(a))
		}
	}
}

// TestApplyInPlace: standardising in place gives Apply's bits.
func TestApplyInPlace(t *testing.T) {
	a := mat.NewDense(4, 2, []float64{1, 10, 2, 20, 3, 35, 4.5, 41})
	n := FitNormalizer(a)
	want := n.Apply(a)
	n.ApplyInPlace(a)
	if !mat.Equal(a, want) {
		t.Errorf("in place %v, Apply %v", mat.Formatted(a), mat.Formatted(want))
	}
}
