package engine

import (
	"fmt"
	"testing"

	"dgpviz/internal/dataset"
)

func TestScratchTraj(t *testing.T) {
	ds := dataset.Step()
	nx, ny := dataset.FitNormalizer(ds.X), dataset.FitNormalizer(ds.Y)
	x, y := nx.Apply(ds.X), ny.Apply(ds.Y)
	for _, seed := range []uint64{1, 3} {
		cfg := InitConfig{Inducing: 15, Seed: seed}
		if seed > 1 {
			cfg.Perturb = 0.5
		}
		m, _ := Initialize(x, y, cfg)
		tr, _ := NewTrainer(m, TrainerConfig{})
		evals := 0
		for i := 1; i <= 20000; i++ {
			s, err := tr.Step()
			if err != nil {
				t.Fatal(err)
			}
			evals += s.Evals
			if i%1000 == 0 || s.Converged || i < 5 {
				k := tr.Model().Layers[0].Kernel.Params()
				fmt.Printf("seed %d iter %d bound %.6f evals %d kern %v noise %g conv %v %s\n", seed, i, s.Bound, evals, k, tr.Model().Layers[0].NoiseVariance, s.Converged, s.Event)
			}
			if s.Converged {
				break
			}
		}
	}
}
