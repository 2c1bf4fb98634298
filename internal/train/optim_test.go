package train

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
	"dgpviz/internal/linalg"

	"gonum.org/v1/gonum/mat"
)

// TestTrainerGradient checks the gradient of the trainer's objective (the
// negative bound in log-transformed, whitened coordinates, optim_whiten.go)
// against central finite differences, with and without frozen groups,
// which change which groups are whitened.
func TestTrainerGradient(t *testing.T) {
	cases := []struct {
		widths  []int
		kernels []string
		m       int
		frozen  map[engine.Group]bool
	}{
		{[]int{1, 1}, []string{"rbf"}, 4, nil},
		{[]int{1, 2, 1}, []string{"rbf", "rbf"}, 4, nil},
		{[]int{2, 2, 3}, []string{"linear", "rbf"}, 3, nil},
		{[]int{1, 2, 1}, []string{"rbf", "rbf"}, 4, map[engine.Group]bool{engine.GroupQMu: true}},
		{[]int{1, 2, 1}, []string{"rbf", "rbf"}, 4, map[engine.Group]bool{engine.GroupQSqrt: true, engine.GroupInducing: true}},
	}
	for ci, tc := range cases {
		t.Run(fmt.Sprint(tc.widths, tc.kernels, tc.frozen), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(ci), 11))
			m := engine.RandomModel(rng, 9, tc.widths, tc.kernels, tc.m)
			tr, err := NewTrainer(m, TrainerConfig{Frozen: tc.frozen})
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := tr.start(); err != nil {
				t.Fatal(err)
			}
			u := append([]float64(nil), tr.u...)
			g := append([]float64(nil), tr.g...)
			scratch := make([]float64, len(u))
			for k := range u {
				h := 1e-4 * math.Max(1, math.Abs(u[k]))
				f := func(v float64) float64 {
					q := append([]float64(nil), u...)
					q[k] = v
					fv, err := tr.eval(q, scratch, nil, false)
					if err != nil {
						t.Fatalf("eval: %v", err)
					}
					return fv
				}
				// Fourth-order central difference: truncation error O(h⁴).
				fd := (8*(f(u[k]+h)-f(u[k]-h)) - (f(u[k]+2*h) - f(u[k]-2*h))) / (12 * h)
				// 1e-6 relative: as TestGradientFiniteDifferences, the
				// engine's own gradient check.
				if e := math.Abs(fd-g[k]) / math.Max(1, math.Abs(fd)); e > 1e-6 {
					info := tr.layout[tr.free[k]]
					t.Errorf("u[%d] (layer %d %v diag=%v): analytic %.10g, finite difference %.10g", k, info.Layer, info.Group, info.Diagonal, g[k], fd)
				}
			}
		})
	}
}

// stepData returns the paper's step data, normalised, and the normalisers.
func stepData() (x, y *mat.Dense, nx, ny dataset.Normalizer) {
	ds := dataset.Step()
	nx, ny = dataset.FitNormalizer(ds.X), dataset.FitNormalizer(ds.Y)
	return nx.Apply(ds.X), ny.Apply(ds.Y), nx, ny
}

// TestTrainerLBFGSMonotone checks that no L-BFGS step lowers the bound
// (the line search enforces sufficient decrease of −bound, or keeps the
// last good point), that 50 steps raise it far, and that the reported
// bound is the model's bound.
func TestTrainerLBFGSMonotone(t *testing.T) {
	for _, widths := range [][]int{{1, 1}, {1, 2, 1}, {2, 2, 3}} {
		t.Run(fmt.Sprint(widths), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(5, 5))
			kernels := []string{"rbf", "rbf", "rbf"}
			m := engine.RandomModel(rng, 20, widths, kernels, 5)
			r0, _ := mustEval(t, m, engine.Options{})
			tr, err := NewTrainer(m, TrainerConfig{})
			if err != nil {
				t.Fatal(err)
			}
			prev := r0.Bound
			for range 50 {
				s, err := tr.Step()
				if err != nil {
					t.Fatal(err)
				}
				// Near the optimum a line search may find no decrease and
				// restart from steepest descent: the bound stays. It never
				// falls.
				if s.Event == "" && s.Bound < prev {
					t.Fatalf("iteration %d: bound %v fell from %v", s.Iter, s.Bound, prev)
				}
				prev = s.Bound
				if s.Status.Converged() {
					break
				}
			}
			r, _ := mustEval(t, tr.Model(), engine.Options{})
			if r.Bound != prev {
				t.Errorf("reported bound %v, model's bound %v", prev, r.Bound)
			}
			// 10 nats: the random models start far from their optimum
			// (r0 ≈ −60…−200), so 50 iterations gain much more.
			if prev < r0.Bound+10 {
				t.Errorf("bound rose only from %v to %v in 50 iterations", r0.Bound, prev)
			}
		})
	}
}

// TestTrainerFrozen checks that frozen groups keep their exact values
// while the rest moves.
func TestTrainerFrozen(t *testing.T) {
	for _, frozen := range []map[engine.Group]bool{
		{engine.GroupInducing: true},
		{engine.GroupKernel: true, engine.GroupNoise: true},
		{engine.GroupQMu: true, engine.GroupQSqrt: true},
		{engine.GroupInducing: true, engine.GroupKernel: true, engine.GroupNoise: true},
	} {
		t.Run(fmt.Sprint(frozen), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(9, 9))
			m := engine.RandomModel(rng, 15, []int{1, 2, 1}, []string{"rbf", "rbf"}, 4)
			before := m.Params(nil)
			layout := m.ParamLayout()
			tr, err := NewTrainer(m, TrainerConfig{Frozen: frozen})
			if err != nil {
				t.Fatal(err)
			}
			for range 20 {
				if _, err := tr.Step(); err != nil {
					t.Fatal(err)
				}
			}
			after := tr.Model().Params(nil)
			moved := 0
			for i, info := range layout {
				if frozen[info.Group] && after[i] != before[i] {
					t.Errorf("frozen %v parameter %d changed: %v → %v", info.Group, i, before[i], after[i])
				}
				if !frozen[info.Group] && after[i] != before[i] {
					moved++
				}
			}
			if moved == 0 {
				t.Error("no free parameter moved")
			}
		})
	}
}

// TestTrainerAdam checks full-batch and minibatch Adam raise the bound and
// report the full-data bound.
func TestTrainerAdam(t *testing.T) {
	for _, batch := range []int{0, 8} {
		t.Run(fmt.Sprint("batch", batch), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 3))
			m := engine.RandomModel(rng, 40, []int{1, 2, 1}, []string{"rbf", "rbf"}, 5)
			r0, _ := mustEval(t, m, engine.Options{})
			tr, err := NewTrainer(m, TrainerConfig{Method: Adam{}, LearningRate: 0.02, BatchSize: batch, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			var s StepInfo
			for range 300 {
				if s, err = tr.Step(); err != nil {
					t.Fatal(err)
				}
				if s.Estimate {
					t.Fatal("bound is an estimate for 40 data (≤ FullBoundRows)")
				}
			}
			r, _ := mustEval(t, tr.Model(), engine.Options{})
			if r.Bound != s.Bound {
				t.Errorf("reported bound %v, model's bound %v", s.Bound, r.Bound)
			}
			// 10 nats, as in TestTrainerLBFGSMonotone.
			if s.Bound < r0.Bound+10 {
				t.Errorf("bound rose only from %v to %v in 300 Adam steps", r0.Bound, s.Bound)
			}
		})
	}
}

// TestTrainerDivergence checks that failures are handled, reported and
// never fatal: a singular Kuu (duplicated inducing inputs, jitter 0) makes
// the trainer raise the jitter; a huge Adam learning rate makes it revert
// and lower the rate.
func TestTrainerDivergence(t *testing.T) {
	t.Run("singular Kuu", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(1, 2))
		m := engine.RandomModel(rng, 15, []int{1, 1}, []string{"rbf"}, 4)
		m.Jitter = 0
		z := m.Layers[0].InducingInputs
		z.Set(1, 0, z.At(0, 0)) // two equal rows: Kuu singular
		tr, err := NewTrainer(m, TrainerConfig{})
		if err != nil {
			t.Fatal(err)
		}
		s, err := tr.Step()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(s.Event, "jitter raised") || tr.Model().Jitter <= 0 {
			t.Errorf("event %q, jitter %v: want the jitter raised", s.Event, tr.Model().Jitter)
		}
		if math.IsNaN(s.Bound) || math.IsInf(s.Bound, 0) {
			t.Errorf("bound %v is not finite", s.Bound)
		}
	})
	t.Run("exploding adam", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(1, 3))
		m := engine.RandomModel(rng, 15, []int{1, 2, 1}, []string{"rbf", "rbf"}, 4)
		// A step of 1e3 in log-parameters overflows exp: certain failure.
		tr, err := NewTrainer(m, TrainerConfig{Method: Adam{}, LearningRate: 1e3})
		if err != nil {
			t.Fatal(err)
		}
		events := 0
		for range 30 {
			s, err := tr.Step()
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(s.Event, "diverged") {
				events++
			}
			if math.IsNaN(s.Bound) || math.IsInf(s.Bound, 0) {
				t.Fatalf("iteration %d: bound %v is not finite", s.Iter, s.Bound)
			}
		}
		if events == 0 {
			t.Error("no divergence reported")
		}
		if err := tr.Model().Validate(); err != nil {
			t.Errorf("model left invalid: %v", err)
		}
	})
	t.Run("unrecoverable", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(1, 4))
		m := engine.RandomModel(rng, 15, []int{1, 1}, []string{"rbf"}, 4)
		m.Layers[0].Kernel.SetParams([]float64{1e300, 1e-300}) // Kuu = 1e300·I ⊗ overflow in the bound
		tr, err := NewTrainer(m, TrainerConfig{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tr.Step(); err == nil {
			t.Log("step succeeded on an extreme model (allowed, as long as it does not panic)")
		}
	})
}

// TestTrainerSetConfigSetModel drives a trainer as the live server does:
// switch optimizer and frozen groups between steps and replace the model by
// one of another architecture.
func TestTrainerSetConfigSetModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	m := engine.RandomModel(rng, 20, []int{1, 1}, []string{"rbf"}, 4)
	tr, err := NewTrainer(m, TrainerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	step := func(n int) StepInfo {
		var s StepInfo
		for range n {
			if s, err = tr.Step(); err != nil {
				t.Fatal(err)
			}
		}
		return s
	}
	s1 := step(5)
	if err := tr.SetConfig(TrainerConfig{Method: Adam{}, LearningRate: 0.005, Frozen: map[engine.Group]bool{engine.GroupInducing: true}}); err != nil {
		t.Fatal(err)
	}
	if c := tr.Config(); c.Method != (Adam{}) || c.LearningRate != 0.005 || !c.Frozen[engine.GroupInducing] {
		t.Errorf("config %+v not applied", c)
	}
	z := mat.DenseCopyOf(tr.Model().Layers[0].InducingInputs)
	s2 := step(5)
	if s2.Iter != s1.Iter+5 {
		t.Errorf("iterations %d after %d + 5", s2.Iter, s1.Iter)
	}
	if !mat.Equal(z, tr.Model().Layers[0].InducingInputs) {
		t.Error("frozen inducing inputs moved under adam")
	}
	for _, bad := range []TrainerConfig{{LearningRate: -1}, {BatchSize: -2}} {
		if err := tr.SetConfig(bad); err == nil {
			t.Errorf("SetConfig(%+v) succeeded", bad)
		}
	}
	m2 := engine.RandomModel(rng, 20, []int{1, 2, 1}, []string{"rbf", "rbf"}, 3)
	if err := tr.SetModel(m2); err != nil {
		t.Fatal(err)
	}
	if err := tr.SetConfig(TrainerConfig{}); err != nil {
		t.Fatal(err)
	}
	s3 := step(3)
	r, _ := mustEval(t, tr.Model(), engine.Options{})
	if len(tr.Model().Layers) != 2 || r.Bound != s3.Bound {
		t.Errorf("after SetModel: %d layers, bound %v vs reported %v", len(tr.Model().Layers), r.Bound, s3.Bound)
	}
	bad := m2.Clone()
	bad.Layers[0].NoiseVariance = -1
	if err := tr.SetModel(bad); err == nil {
		t.Error("SetModel accepted a negative noise variance")
	}
	if _, err := NewTrainer(nil, TrainerConfig{}); err == nil {
		t.Error("NewTrainer accepted a nil model")
	}
}

// TestFitDeterministic checks that the same configuration gives the same
// parameters bit for bit, whatever the number of workers.
func TestFitDeterministic(t *testing.T) {
	x, y, _, _ := stepData()
	var first []float64
	for _, workers := range []int{1, 2, 1} {
		m, best, _, err := FitRestarts(context.Background(), x, y, InitConfig{Hidden: []int{1}, Inducing: 8, Seed: 7},
			TrainerConfig{Workers: workers}, FitOptions{MaxIters: 60}, 2, nil)
		if err != nil {
			t.Fatal(err)
		}
		p := append(m.Params(nil), float64(best), m.Jitter)
		if first == nil {
			first = p
			continue
		}
		if !slices.Equal(first, p) {
			t.Fatalf("workers %d: parameters differ from the first fit", workers)
		}
	}
}

// TestNormInfAxpy: normInf is the fold of math.Max over |x_i| (Inf before
// NaN), and axpy adds a·x to y, on every length mod 4.
func TestNormInfAxpy(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	for _, x := range [][]float64{nil, {-3}, {1, -7, 2, 5, 0.5}, {1, nan, 2}, {nan, -inf, 1}, {2, -inf, nan}, {-0.0}} {
		want := 0.0
		for _, v := range x {
			want = math.Max(want, math.Abs(v))
		}
		if got := normInf(x); got != want && !(math.IsNaN(got) && math.IsNaN(want)) {
			t.Errorf("normInf(%v) = %v, want %v", x, got, want)
		}
	}
	for n := range 9 {
		x, y := make([]float64, n), make([]float64, n)
		for i := range x {
			x[i], y[i] = float64(i)+0.5, float64(3*i)
		}
		axpy(-2, x, y)
		for i := range y {
			if want := float64(3*i) - 2*(float64(i)+0.5); y[i] != want {
				t.Errorf("n=%d: axpy y[%d] = %v, want %v", n, i, y[i], want)
			}
		}
	}
}

// TestDirectionFused: the two-loop recursion with each update fused with
// the next dot product gives the bits of the plain loops, for every number
// of stored pairs and a wrapped ring.
func TestDirectionFused(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	const n = 103
	for stored := 0; stored <= lbfgsMemory; stored++ {
		tr := &Trainer{g: make([]float64, n)}
		lb := &tr.lb
		lb.s, lb.y = make([][]float64, lbfgsMemory), make([][]float64, lbfgsMemory)
		lb.rho, lb.alpha = make([]float64, lbfgsMemory), make([]float64, lbfgsMemory)
		for k := range lbfgsMemory {
			lb.s[k], lb.y[k] = make([]float64, n), make([]float64, n)
			for i := range n {
				lb.s[k][i], lb.y[k][i] = rng.NormFloat64(), rng.NormFloat64()
			}
			lb.rho[k] = 1 / (1 + rng.Float64())
		}
		for i := range tr.g {
			tr.g[i] = rng.NormFloat64()
		}
		lb.n, lb.top = stored, (7+stored)%lbfgsMemory
		got := make([]float64, n)
		tr.direction(got)
		// The plain recursion.
		want := append([]float64(nil), tr.g...)
		alpha := make([]float64, lbfgsMemory)
		for i := 0; i < lb.n; i++ {
			k := (lb.top - 1 - i + lbfgsMemory) % lbfgsMemory
			alpha[k] = lb.rho[k] * linalg.Dot(lb.s[k], want)
			axpy(-alpha[k], lb.y[k], want)
		}
		if lb.n > 0 {
			k := (lb.top - 1 + lbfgsMemory) % lbfgsMemory
			gamma := 1 / (lb.rho[k] * linalg.Dot(lb.y[k], lb.y[k]))
			for i := range want {
				want[i] *= gamma
			}
		}
		for i := lb.n - 1; i >= 0; i-- {
			k := (lb.top - 1 - i + lbfgsMemory) % lbfgsMemory
			beta := lb.rho[k] * linalg.Dot(lb.y[k], want)
			axpy(alpha[k]-beta, lb.s[k], want)
		}
		for i := range want {
			want[i] = -want[i]
			if got[i] != want[i] {
				t.Fatalf("%d pairs: d[%d] = %v, plain loops %v", stored, i, got[i], want[i])
			}
		}
	}
}
