package train

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"

	"gonum.org/v1/gonum/mat"
)

// TestNaturalStepFinalLayerIsCollapsedOptimum: on all the data a
// natural-gradient step of size 1 on the final layer's q(u) — the step
// SVI takes, from the whitened gradient — lands on the optimum the
// collapsed bound computes (engine.OptimalFinalQ), and the bound there is
// the collapsed bound: the final layer is conjugate, so the bound is
// quadratic in its q(u)'s expectation parameters.
func TestNaturalStepFinalLayerIsCollapsedOptimum(t *testing.T) {
	m := engine.RandomModel(rand.New(rand.NewPCG(35, 4)), 60, []int{1, 3, 3, 4}, []string{"rbf", "rbf", "rbf"}, 6)
	tr, err := NewTrainer(m.Clone(), TrainerConfig{Method: SVI{}, BatchSize: 60, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if tr.OptimalFinalQ() {
		t.Fatal("an SVI trainer keeps the final q(u) at its optimum: it must step it")
	}
	if _, _, err := tr.start(); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.eval(tr.u, tr.g, nil, true); err != nil {
		t.Fatal(err)
	}
	last := len(m.Layers) - 1
	gamma := make([]float64, len(m.Layers))
	gamma[last] = 1
	unbounded := []float64{math.Inf(1), math.Inf(1), math.Inf(1)}
	step := make([]float64, len(tr.w))
	tr.natSteps(tr.gfull, gamma, unbounded, step)
	for k, i := range tr.free {
		tr.ut[k] = tr.u[k]
		if tr.isQ[k] && tr.layout[i].Layer == last {
			tr.ut[k] += step[i]
		}
	}
	if err := tr.setU(tr.ut); err != nil {
		t.Fatal(err)
	}

	ev := engine.Evaluator{Workers: 1}
	collapsed, _, err := ev.Evaluate(m, engine.Options{OptimalFinalQ: true})
	if err != nil {
		t.Fatal(err)
	}
	before, _, err := ev.Evaluate(m, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if collapsed.Bound-before.Bound < 1 {
		t.Fatalf("the start's bound %.6g is within a nat of the collapsed %.6g: the test shows nothing", before.Bound, collapsed.Bound)
	}
	got := tr.Model().Layers[last]
	want := collapsed.FinalQ
	scale := mat.Norm(want.Mu, math.Inf(1))
	if d := maxAbsDiff(got.QMu, want.Mu); d > 1e-8*scale {
		t.Errorf("q_mu off the optimum by %.3g (scale %.3g)", d, scale)
	}
	for k, s := range got.QSqrt {
		if d := maxAbsDiff(s, want.Sqrt); d > 1e-8*mat.Norm(want.Sqrt, math.Inf(1)) {
			t.Errorf("output %d: q_sqrt off the optimum by %.3g", k+1, d)
		}
	}
	after, _, err := ev.Evaluate(tr.Model(), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d := math.Abs(after.Bound - collapsed.Bound); d > 1e-8*math.Abs(collapsed.Bound) {
		t.Errorf("bound after the step %.12g, collapsed bound %.12g", after.Bound, collapsed.Bound)
	}
}

func maxAbsDiff(a, b *mat.Dense) float64 {
	var d mat.Dense
	d.Sub(a, b)
	return mat.Norm(&d, math.Inf(1))
}

// walkData returns n rows of dataset.Walk (seed): the time and the first
// beacons of its signal strengths, with its noise of dataset.WalkNoiseDBm.
func walkData(n, beacons int, seed uint64) (x, y *mat.Dense) {
	w := dataset.NewWalk(seed, n)
	x, y = mat.NewDense(n, 1, nil), mat.NewDense(n, beacons, nil)
	for i := range n {
		r := w.Next()
		x.Set(i, 0, r.Time)
		y.SetRow(i, r.Signal[:beacons])
	}
	return x, y
}

// splitEvery returns the rows whose index is k−1 mod every (held out) and
// the others.
func splitEvery(a *mat.Dense, every int) (train, held *mat.Dense) {
	n, c := a.Dims()
	var tr, he []float64
	for i := range n {
		if i%every == every-1 {
			he = append(he, a.RawRowView(i)...)
		} else {
			tr = append(tr, a.RawRowView(i)...)
		}
	}
	return mat.NewDense(len(tr)/c, c, tr), mat.NewDense(len(he)/c, c, he)
}

// heldOutRMSE is the root mean squared error of m's predictive mean at x
// against y, in y's original units.
func heldOutRMSE(t testing.TB, m *engine.Model, nx, ny dataset.Normalizer, x, y *mat.Dense) float64 {
	t.Helper()
	var ev engine.Evaluator
	msgs, err := ev.Predict(m, nx.Apply(x))
	if err != nil {
		t.Fatal(err)
	}
	pred := ny.UndoMean(msgs[len(msgs)-1].Mean)
	n, d := y.Dims()
	var ss float64
	for i := range n {
		for j := range d {
			e := pred.At(i, j) - y.At(i, j)
			ss += e * e
		}
	}
	return math.Sqrt(ss / float64(n*d))
}

// TestSVIFitsWalk: a stochastic fit of a walk of 3000 rows (time → 8
// beacons, noise 2 dBm, every 10th row held out) in minibatches of 64
// reaches a held-out error near the noise within 600 steps (~14
// passes), and the model is at its best checked bound, which rose.
func TestSVIFitsWalk(t *testing.T) {
	const noise = dataset.WalkNoiseDBm
	xa, ya := walkData(3000, 8, 1)
	xt, xh := splitEvery(xa, 10)
	yt, yh := splitEvery(ya, 10)
	nx, ny := dataset.FitNormalizer(xt), dataset.FitNormalizer(yt)
	m, err := Initialize(nx.Apply(xt), ny.Apply(yt), RobotPreset(1).Init)
	if err != nil {
		t.Fatal(err)
	}
	rmse0 := heldOutRMSE(t, m, nx, ny, xh, yh)
	tr, err := NewTrainer(m, TrainerConfig{Method: SVI{}, BatchSize: 64, Seed: 1, Window: 20, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	info, first, checks := fitSteps(t, tr, 600)
	rmse := heldOutRMSE(t, tr.Model(), nx, ny, xh, yh)
	t.Logf("held-out RMSE %.3f dBm from %.3f, after %d steps (%.1f epochs, %d checks), bound %.6g from %.6g, %v", rmse, rmse0, info.Iter, info.Epochs, checks, info.Bound, first.Bound, info.Status)
	if rmse > 1.2*noise {
		t.Errorf("held-out RMSE %.3f dBm, want ≤ %.3g (the noise is %g)", rmse, 1.2*noise, noise)
	}
	checkAtBest(t, tr, info, first)
}

// TestSVIStops: on a small walk a stochastic fit ends by itself — its
// stopping rule (at a loose 10 nats per 1000 steps, to stay fast: at the
// default 0.01 this fit crawls on for thousands of steps), or step sizes
// halved to nothing — at its best check.
func TestSVIStops(t *testing.T) {
	xa, ya := walkData(300, 3, 2)
	nx, ny := dataset.FitNormalizer(xa), dataset.FitNormalizer(ya)
	m, err := Initialize(nx.Apply(xa), ny.Apply(ya), InitConfig{Inducing: 8, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := NewTrainer(m, TrainerConfig{Method: SVI{}, BatchSize: 50, Seed: 1, Window: 10, TolAbs: 10, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	info, first, checks := fitSteps(t, tr, 600)
	t.Logf("after %d steps (%.1f epochs, %d checks): bound %.6g from %.6g, %v, expected rise %.3g", info.Iter, info.Epochs, checks, info.Bound, first.Bound, info.Status, info.Expected)
	if info.Status != FunctionConvergence && info.Status != Stationary {
		t.Errorf("the fit stopped by %v, not by itself", info.Status)
	}
	checkAtBest(t, tr, info, first)
}

// fitSteps steps tr until it stops or for n steps and returns the last
// step, the first check and the number of checks.
func fitSteps(t *testing.T, tr *Trainer, n int) (last, first StepInfo, checks int) {
	t.Helper()
	for range n {
		info, err := tr.Step()
		if err != nil {
			t.Fatal(err)
		}
		if !info.Estimate {
			if checks == 0 {
				first = info
			}
			checks++
		}
		last = info
		if info.Status.Terminated() {
			break
		}
	}
	return last, first, checks
}

// checkAtBest checks that the model's bound is the best check's, and that
// it rose from the first.
func checkAtBest(t *testing.T, tr *Trainer, last, first StepInfo) {
	t.Helper()
	best := -tr.f
	if best <= first.Bound {
		t.Errorf("the best check's bound %.6g is not above the first's %.6g", best, first.Bound)
	}
	if last.Status.Terminated() && (last.Estimate || last.Bound != best) {
		t.Errorf("the last step's bound %.10g (estimate %v), the best check's %.10g", last.Bound, last.Estimate, best)
	}
	if tr.svi.since == 0 || last.Status.Terminated() {
		if got, err := boundNow(tr.Model()); err != nil || math.Abs(got-best) > 1e-9*math.Abs(got) {
			t.Errorf("the model's bound %.10g (%v), the best check's %.10g: the model is not at its best check", got, err, best)
		}
	}
}

func boundNow(m *engine.Model) (float64, error) {
	r, _, err := engine.Evaluate(m, engine.Options{})
	if err != nil {
		return 0, err
	}
	return r.Bound, nil
}

// TestOptimalNoise: the final layer's noise variance that optimalNoise
// computes from the bound's gradient is the bound's maximum along it: the
// derivative there is zero (to 1e-6 of where it started) and the bound
// falls either side.
func TestOptimalNoise(t *testing.T) {
	m := engine.RandomModel(rand.New(rand.NewPCG(35, 5)), 50, []int{1, 2, 3}, []string{"rbf", "rbf"}, 6)
	l := m.Layers[len(m.Layers)-1]
	_, g := evalGrad(t, m)
	g0 := g.Layers[1].NoiseVariance
	s2 := optimalNoise(l.NoiseVariance, g0, 50*3)
	if !(s2 > 0) || math.Abs(s2-l.NoiseVariance) < 1e-3*l.NoiseVariance {
		t.Fatalf("optimum %v from %v: the test shows nothing", s2, l.NoiseVariance)
	}
	l.NoiseVariance = s2
	b, g := evalGrad(t, m)
	if g1 := g.Layers[1].NoiseVariance; math.Abs(g1) > 1e-6*math.Abs(g0) {
		t.Errorf("derivative %.3g at the optimum %.6g, %.3g where it started", g1, s2, g0)
	}
	for _, f := range []float64{0.99, 1.01} {
		l.NoiseVariance = f * s2
		if o, _ := evalGrad(t, m); o >= b {
			t.Errorf("bound %.12g at %g × the optimum, %.12g at it", o, f, b)
		}
	}
}

func evalGrad(t *testing.T, m *engine.Model) (float64, *engine.Gradient) {
	t.Helper()
	r, g, err := engine.Evaluate(m, engine.Options{Gradient: true})
	if err != nil {
		t.Fatal(err)
	}
	return r.Bound, g
}

// TestPresetsChooseFullBatch: the robot and Frey data, whose presets'
// quality tests fit them on the full data, are below StochasticRows, so
// that the automatic choice leaves them to L-BFGS as before.
func TestPresetsChooseFullBatch(t *testing.T) {
	for _, c := range []struct {
		name string
		path string
		load func(string) (*dataset.Dataset, error)
	}{
		{"robot", filepath.Join("..", "..", "..", "shared", "data", "robot_wireless", "uw-floor.txt"), dataset.LoadRobot},
		{"frey", filepath.Join("..", "..", "..", "shared", "data", "frey_faces", "frey_rawface.mat"), dataset.LoadFrey},
	} {
		if _, err := os.Stat(c.path); err != nil {
			t.Logf("%s data not found at %s (the shared data are not committed): skipped", c.name, c.path)
			continue
		}
		ds, err := c.load(c.path)
		if err != nil {
			t.Fatal(err)
		}
		n, _ := ds.X.Dims()
		if m := ChooseMethod(n); m != (LBFGS{}) {
			t.Errorf("%s: %d rows choose %v, want lbfgs", c.name, n, m)
		}
		t.Logf("%s: %d rows, full batch", c.name, n)
	}
	if ChooseMethod(StochasticRows) != (LBFGS{}) || ChooseMethod(StochasticRows+1) != (SVI{}) {
		t.Errorf("the choice does not switch above StochasticRows")
	}
}

// TestSVIInterruptedKeepsBest: a stochastic fit interrupted between
// checks returns the model at its best check, with that bound.
func TestSVIInterruptedKeepsBest(t *testing.T) {
	xa, ya := walkData(300, 3, 3)
	nx, ny := dataset.FitNormalizer(xa), dataset.FitNormalizer(ya)
	m, err := Initialize(nx.Apply(xa), ny.Apply(ya), InitConfig{Inducing: 8, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var last StepInfo
	opt := FitOptions{MaxIters: 1000, Progress: func(s StepInfo) {
		last = s
		if s.Iter == 25 {
			cancel()
		}
	}}
	fm, rep, err := Fit(ctx, m, TrainerConfig{Method: SVI{}, BatchSize: 50, Seed: 1, Window: 10, Workers: 1}, opt)
	if err == nil || last.Iter != 25 || !last.Estimate {
		t.Fatalf("error %v after step %d (estimate %v): want an interruption between checks", err, last.Iter, last.Estimate)
	}
	got, err := boundNow(fm)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got-rep.Bound) > 1e-9*math.Abs(got) || rep.Bound == last.Bound {
		t.Errorf("the model's bound %.10g, the report's %.10g, the last estimate %.10g: want the best check's", got, rep.Bound, last.Bound)
	}
}
