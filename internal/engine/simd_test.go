package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// forEachKernelPath runs f with the portable Go code and, where the CPU
// has AVX2 and FMA, with the assembly kernels. Engine tests do not run in
// parallel, so switching the package's useSIMD is safe.
func forEachKernelPath(t *testing.T, f func(t *testing.T)) {
	paths := []bool{false}
	if haveSIMD {
		paths = append(paths, true)
	}
	for _, simd := range paths {
		name := "go"
		if simd {
			name = "simd"
		}
		t.Run(name, func(t *testing.T) {
			old := useSIMD
			useSIMD = simd
			defer func() { useSIMD = old }()
			f(t)
		})
	}
}

// TestSIMDMatchesGo: the assembly pair loop and exp give what the Go code
// gives, to rounding, for every output of an evaluation: bound, per-datum
// penalties, messages and gradient; over input dimensions 1 to 5 (the
// assembly loops over dimensions; the old Go code had special cases for 1
// and 3) and pair counts that are and are not multiples of four.
func TestSIMDMatchesGo(t *testing.T) {
	if !haveSIMD {
		t.Skip("engine: this CPU has no AVX2+FMA; only the Go path runs here")
	}
	cases := []struct {
		widths []int
		m      int // pairs m(m+1)/2: 15 (padded to 16), 28, 21 (24), 36
	}{
		{[]int{1, 1, 1}, 5},
		{[]int{1, 3, 3, 4}, 7},
		{[]int{2, 2, 5, 1}, 6},
		{[]int{1, 4, 2}, 8},
	}
	for ci, tc := range cases {
		t.Run(fmt.Sprint(tc.widths), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(ci), 11))
			kernels := make([]string, len(tc.widths)-1)
			for i := range kernels {
				kernels[i] = "rbf"
			}
			m := RandomModel(rng, 70, tc.widths, kernels, tc.m)
			eval := func(simd bool) ([]float64, []float64) {
				old := useSIMD
				useSIMD = simd
				defer func() { useSIMD = old }()
				r, g := mustEval(t, m, Options{Gradient: true, OutputVariance: true})
				out := []float64{r.Bound, r.Likelihood}
				for i, l := range r.Layers {
					out = append(out, l.KL, l.Compression, l.Propagation)
					out = append(out, l.CompressionPerDatum...)
					out = append(out, l.PropagationPerDatum...)
					out = append(out, r.Messages[i].Mean.RawMatrix().Data...)
					out = append(out, r.Messages[i].Var.RawMatrix().Data...)
				}
				return out, g.Flatten(nil)
			}
			wantOut, wantGrad := eval(false)
			gotOut, gotGrad := eval(true)
			compare := func(what string, got, want []float64) {
				for i := range want {
					// Kuu with jitter 1e-4 is ill-conditioned enough that
					// rounding moves gradients by ~1e-10 relative: swapping
					// math.Exp for the Go exp alone moved them by up to
					// 9e-11 here. A layout or algebra mistake moves them
					// by whole units.
					if d := math.Abs(got[i] - want[i]); !(d <= 1e-9*math.Max(1, math.Abs(want[i]))) {
						t.Errorf("%s[%d]: assembly %.17g, Go %.17g", what, i, got[i], want[i])
						return
					}
				}
			}
			compare("outputs", gotOut, wantOut)
			compare("gradient", gotGrad, wantGrad)
		})
	}
}

// TestPredictionIndependentOfBatch: the prediction at an input is the same
// to the last bit whether it is predicted alone, with a few others or
// with the whole data set: no kernel's arithmetic may depend on a row's
// position (a 4×8 block's edge, a vector's tail) or on the batch size.
func TestPredictionIndependentOfBatch(t *testing.T) {
	forEachKernelPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(16, 17))
		m := RandomModel(rng, 37, []int{1, 3, 2}, []string{"rbf", "rbf"}, 9)
		var e Evaluator
		all, err := e.Predict(m, m.X)
		if err != nil {
			t.Fatal(err)
		}
		for _, rows := range [][]int{{0}, {36}, {5, 6, 7}, {1, 2, 3, 4, 5, 8, 13, 21, 34}} {
			x := mat.NewDense(len(rows), 1, nil)
			for k, r := range rows {
				x.Set(k, 0, m.X.At(r, 0))
			}
			part, err := e.Predict(m, x)
			if err != nil {
				t.Fatal(err)
			}
			for l := range part {
				_, d := part[l].Mean.Dims()
				for k, r := range rows {
					for j := 0; j < d; j++ {
						if a, b := part[l].Mean.At(k, j), all[l].Mean.At(r, j); a != b {
							t.Fatalf("rows %v: layer %d mean[%d][%d] = %v alone, %v in the full batch", rows, l, r, j, a, b)
						}
						if a, b := part[l].Var.At(k, j), all[l].Var.At(r, j); a != b {
							t.Fatalf("rows %v: layer %d var[%d][%d] = %v alone, %v in the full batch", rows, l, r, j, a, b)
						}
					}
				}
			}
		}
	})
}

// TestPortableBuilds vets the package as it builds without the assembly:
// with the purego tag and for arm64 (a laptop lecturer's Mac), so that the
// Go fallback and the stubs in simd_other.go keep compiling.
func TestPortableBuilds(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		goCmd = filepath.Join(runtime.GOROOT(), "bin", "go")
		if _, err := os.Stat(goCmd); err != nil {
			t.Skip("engine: no go command to vet the portable builds with")
		}
	}
	for _, c := range []struct {
		name string
		env  []string
		args []string
	}{
		{"purego", nil, []string{"vet", "-tags", "purego", "."}},
		{"arm64", []string{"GOARCH=arm64"}, []string{"vet", "."}},
	} {
		cmd := exec.Command(goCmd, c.args...)
		cmd.Env = append(os.Environ(), c.env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: go %s: %v\n%s", c.name, strings.Join(c.args, " "), err, out)
		}
	}
}

// randomPsi2 is an RBF kernel on q dimensions with lengthscales in
// [0.5, 1.5), m standard normal inducing inputs and its Ψ2 loop.
func randomPsi2(rng *rand.Rand, q, m int) (*RBF, []float64, *rbfPsi2) {
	ls := make([]float64, q)
	for r := range ls {
		ls[r] = 0.5 + rng.Float64()
	}
	k := NewRBF(1.3, ls)
	z := make([]float64, m*q)
	for i := range z {
		z[i] = rng.NormFloat64()
	}
	return k, z, k.newPsi2(z, m, nil).(*rbfPsi2)
}

// TestSIMDAccumulatorMatchesGo compares the Ψ2 pair loop's accumulator
// itself, ΣΨ2's low part included (too small to move the outputs that
// TestSIMDMatchesGo compares), after a few data, for q ≤ 3 and q > 3,
// with and without the exact summation (sumExact: the same Go code on
// both paths, so bit for bit; without, ΣΨ2 is the kernels' own sum).
func TestSIMDAccumulatorMatchesGo(t *testing.T) {
	if !haveSIMD {
		t.Skip("engine: this CPU has no AVX2+FMA; only the Go path runs here")
	}
	for _, tc := range []struct {
		q     int
		exact bool
	}{{1, true}, {2, true}, {3, true}, {5, true}, {12, true}, {1, false}, {3, false}, {5, false}, {12, false}} {
		q := tc.q
		rng := rand.New(rand.NewPCG(uint64(q), 3))
		m := 7
		k, z, p := randomPsi2(rng, q, m)
		g, w1, w2 := make([]float64, m*m), make([]float64, m*m), make([]float64, m*m)
		for i := 0; i < m; i++ {
			for j := 0; j <= i; j++ {
				g[i*m+j], w1[i*m+j], w2[i*m+j] = rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()
				g[j*m+i], w1[j*m+i], w2[j*m+i] = g[i*m+j], w1[i*m+j], w2[i*m+j]
			}
		}
		p.setWeights(g, w1, w2)
		p.setCompensated(tc.exact)
		run := func(simd bool) []float64 {
			old := useSIMD
			useSIMD = simd
			defer func() { useSIMD = old }()
			acc := &psi2Acc{buf: make([]float64, p.accLen())}
			rng := rand.New(rand.NewPCG(7, 7))
			mu, s, psi1 := make([]float64, q), make([]float64, q), make([]float64, m)
			dMu, dS := make([]float64, q), make([]float64, q)
			for range 40 {
				for r := range mu {
					mu[r], s[r] = rng.NormFloat64(), 0.1*rng.Float64()
				}
				k.psi1(psi1, mu, s, z, nil)
				p.datum(acc, mu, s, psi1, dMu, dS)
			}
			return acc.buf
		}
		want, got := run(false), run(true)
		// The exponentials differ in the last bit at times (the Go code's
		// products are not fused): the kernels' sums agree to their ulps;
		// the exact sums are the same code's.
		exact := map[int]bool{}
		var nonzero [2]bool
		for k := range p.pi {
			i, c := p.accAt(0, k), p.accAt(1, k)
			nonzero[0] = nonzero[0] || want[c] != 0
			nonzero[1] = nonzero[1] || got[c] != 0
			if tc.exact {
				exact[i], exact[c] = true, true
				if got[i] != want[i] || got[c] != want[c] {
					t.Errorf("q %d: pair %d: exact ΣΨ2: assembly path %v + %v, Go %v + %v", q, k, got[i], got[c], want[i], want[c])
				}
			}
		}
		for i := range want {
			if exact[i] {
				continue
			}
			if d := math.Abs(got[i] - want[i]); !(d <= 1e-13*math.Max(1e-3, math.Abs(want[i]))) {
				t.Errorf("q %d: acc[%d]: assembly %.17g, Go %.17g", q, i, got[i], want[i])
			}
		}
		if tc.exact && (!nonzero[0] || !nonzero[1]) {
			t.Errorf("q %d: every low part is 0 (Go, assembly: %v)", q, nonzero)
		}
		if !tc.exact && (nonzero[0] || nonzero[1]) {
			t.Errorf("q %d: a low part without the exact sum (Go, assembly: %v)", q, nonzero)
		}
	}
}
