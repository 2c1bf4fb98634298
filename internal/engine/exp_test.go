package engine

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestFastExp compares fastExp with math.Exp over the whole range the psi
// statistics use, and at the edges of its fast path, on both kernel paths.
func TestFastExp(t *testing.T) {
	forEachKernelPath(t, testFastExp)
}

func testFastExp(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	worst := 0.0
	xs := []float64{0, -0, 1e-300, -1e-300, math.Ln2 / 128, -700, 699.9, -699.999, -745, 710, math.Inf(-1), math.Inf(1)}
	for range 1000000 {
		xs = append(xs, -rng.Float64()*60)
	}
	for range 100000 {
		xs = append(xs, (rng.Float64()*2-1)*700)
	}
	for _, x := range xs {
		got, want := fastExp(x), math.Exp(x)
		if want == 0 || math.IsInf(want, 0) {
			if got != want {
				t.Errorf("fastExp(%v) = %v, want %v", x, got, want)
			}
			continue
		}
		if want < 0x1p-1022 {
			// Subnormal: two units of the smallest subnormal.
			if math.Abs(got-want) > 0x1p-1073 {
				t.Errorf("fastExp(%v) = %v, want %v", x, got, want)
			}
			continue
		}
		rel := math.Abs(got-want) / want
		worst = math.Max(worst, rel)
	}
	// A few ulp (2.2e-16 each) is what the gradient checks can tolerate.
	if worst > 1e-15 {
		t.Errorf("worst relative error %.3g, want ≤ 1e-15", worst)
	}
	if !math.IsNaN(fastExp(math.NaN())) {
		t.Error("fastExp(NaN) is not NaN")
	}
	t.Logf("worst relative error %.3g", worst)
}

func BenchmarkExp(b *testing.B) {
	xs := make([]float64, 1024)
	for i := range xs {
		xs[i] = -float64(i) / 100
	}
	b.Run("math", func(b *testing.B) {
		var s float64
		for i := range b.N {
			s += math.Exp(xs[i&1023])
		}
		_ = s
	})
	b.Run("fast", func(b *testing.B) {
		var s float64
		for i := range b.N {
			s += fastExp(xs[i&1023])
		}
		_ = s
	})
}

// TestExpAllSIMD compares the assembly exp (four at a time) with math.Exp:
// a few ulp in the normal range; at most two units of the smallest
// subnormal (4.9e-324) below it; exact
// 0, +Inf and NaN at the ends.
func TestExpAllSIMD(t *testing.T) {
	if !haveSIMD {
		t.Skip("engine: this CPU has no AVX2+FMA; the Go path is tested by TestFastExp")
	}
	rng := rand.New(rand.NewPCG(2, 2))
	xs := []float64{0, -0, 1e-300, -1e-300, -700, 699.9, -708.3, -708.5, -720, -745, -745.2, -746, -800,
		709.7, 709.79, 709.8, 710, 800, math.Inf(-1), math.Inf(1), math.NaN(), math.Ln2 / 2, -math.Ln2 / 2}
	for range 1000000 {
		xs = append(xs, -rng.Float64()*60)
	}
	for range 200000 {
		xs = append(xs, (rng.Float64()*2-1)*750)
	}
	for len(xs)%4 != 0 {
		xs = append(xs, 1)
	}
	got := append([]float64(nil), xs...)
	expAVX2(&got[0], len(got))
	worst := 0.0
	for i, x := range xs {
		want := math.Exp(x)
		if x > 709 && x < 710 {
			// math.Exp's amd64 assembly returns +Inf above about 709.4,
			// short of the true limit 709.78; (e^(x/2))² is a few ulp off.
			h := math.Exp(x / 2)
			want = h * h
		}
		switch {
		case math.IsNaN(want):
			if !math.IsNaN(got[i]) {
				t.Errorf("exp(%v) = %v, want NaN", x, got[i])
			}
		case want == 0 || math.IsInf(want, 0):
			if got[i] != want {
				t.Errorf("exp(%v) = %v, want %v", x, got[i], want)
			}
		case want < 0x1p-1022:
			// The polynomial's error of an ulp or so plus the final
			// rounding: two units of the smallest subnormal.
			if math.Abs(got[i]-want) > 0x1p-1073 {
				t.Errorf("exp(%v) = %v, want %v within two subnormal ulp", x, got[i], want)
			}
		default:
			worst = math.Max(worst, math.Abs(got[i]-want)/want)
		}
	}
	if worst > 1e-15 {
		t.Errorf("worst relative error %.3g, want ≤ 1e-15", worst)
	}
	t.Logf("worst relative error %.3g", worst)
}

// TestExpAllPositionIndependent: an element's exponential has the same bits
// wherever it sits in the slice (a vector's body or its tail).
func TestExpAllPositionIndependent(t *testing.T) {
	forEachKernelPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(18, 19))
		for n := 1; n <= 13; n++ {
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = -40 * rng.Float64()
			}
			got := append([]float64(nil), xs...)
			expAll(got)
			for i, x := range xs {
				if one := fastExp(x); got[i] != one {
					t.Fatalf("n=%d: element %d: %v in the slice, %v alone", n, i, got[i], one)
				}
			}
		}
	})
}
