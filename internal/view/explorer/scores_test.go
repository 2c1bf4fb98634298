package explorer

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
	"dgpviz/internal/latent"
	"dgpviz/internal/view"
	"dgpviz/internal/wire"

	"gonum.org/v1/gonum/mat"
)

// TestSampledScoresOnThePage: when the geometry score is sampled (the
// samples made small here), the setup says what from and gives the
// baselines' standard errors, and the analysis's scores carry theirs; the
// setup's revisits are at most MaxRevisitPairs.
func TestSampledScoresOnThePage(t *testing.T) {
	defer func(s latent.Sampling) { latent.DefaultSampling = s }(latent.DefaultSampling)
	latent.DefaultSampling = latent.Sampling{Rows: 60, FarPairs: 500, PerRow: 4, Seed: 1}
	const n = 300
	m := engine.RandomModel(rand.New(rand.NewPCG(1, 2)), n, []int{1, 2, 3}, []string{"rbf", "rbf"}, 5)
	truth := mat.NewDense(n, 2, nil)
	for i := range n {
		a := 6 * math.Pi * float64(i) / n // three laps
		truth.Set(i, 0, 10*math.Cos(a))
		truth.Set(i, 1, 10*math.Sin(a))
	}
	ds := &dataset.Dataset{Name: "loop", X: m.X, Y: m.Y, InputNames: []string{"time"}, OutputNames: []string{"a", "b", "c"},
		Truth: truth, TruthNames: []string{"truth_x", "truth_y"}}
	v := New(view.NewEnv(context.Background(), 10))
	d := view.NewData(1, ds)
	s := v.Setup(&wire.Encoder{}, d).(*setupSection)
	tr := s.Truth
	if tr == nil || tr.Sample == nil || tr.Sample.Rows != 60 || tr.Sample.FarPairs != 500 || tr.Revisits == 0 {
		t.Fatalf("truth %+v: want a sample of 60 rows and 500 far pairs", tr)
	}
	for _, b := range tr.Baselines {
		if b.Score == nil || b.StdErr == nil || !(float64(*b.StdErr) > 0) {
			t.Errorf("baseline %q: score %v ± %v", b.Name, b.Score, b.StdErr)
		}
	}
	a := analyze(m, v.factsOf(d))
	if len(a.Scores) != 1 || !a.Scores[0].Sampled() || !(a.Scores[0].StdErr > 0) || stdErr(a.Scores[0]) == nil {
		t.Errorf("scores %+v: want sampled, each with its standard error", a.Scores)
	}

	// Exact below the samples' sizes: no sample, no standard errors.
	latent.DefaultSampling = latent.Sampling{Rows: 1000, FarPairs: 1 << 20, PerRow: 1000, Seed: 1}
	s = New(view.NewEnv(context.Background(), 10)).Setup(&wire.Encoder{}, d).(*setupSection)
	if s.Truth.Sample != nil || s.Truth.Baselines[0].StdErr != nil || len(s.Truth.Baselines) != 2 {
		t.Errorf("exact scores: sample %+v, baseline %+v", s.Truth.Sample, s.Truth.Baselines[0])
	}
	if want := len(latent.Revisits(truth, latent.RuleFor(truth))); s.Truth.Revisits != want {
		t.Errorf("%d revisits, want every one: %d", s.Truth.Revisits, want)
	}
}
