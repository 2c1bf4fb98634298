package engine

import (
	"context"
	"fmt"
	"testing"
	"time"

	"dgpviz/internal/dataset"
)

func TestScratchStep(t *testing.T) {
	ds := dataset.Step()
	nx, ny := dataset.FitNormalizer(ds.X), dataset.FitNormalizer(ds.Y)
	x, y := nx.Apply(ds.X), ny.Apply(ds.Y)
	for _, hidden := range [][]int{nil, {1}, {1, 1}} {
		for _, hi := range []string{"linear", "pca"} {
			for _, seed := range []uint64{1, 2, 3} {
				cfg := InitConfig{Hidden: hidden, Inducing: 15, Seed: seed, HiddenInit: hi}
				if seed > 1 {
					cfg.Perturb = 0.5
				}
				m, err := Initialize(x, y, cfg)
				if err != nil {
					t.Fatal(err)
				}
				r0, _, _ := Evaluate(m, Options{})
				start := time.Now()
				var events []string
				fm, rep, err := Fit(context.Background(), m, TrainerConfig{}, FitOptions{MaxIters: 3000, Progress: func(s StepInfo) {
					if s.Event != "" {
						events = append(events, s.Event)
					}
				}})
				if err != nil {
					t.Fatal(err)
				}
				w, o := riseOvershoot(t, fm, nx, ny)
				fmt.Printf("hidden=%v init=%s seed=%d start=%.3f bound=%.4f iters=%d conv=%v t=%v rise=%.4f over=%.4f ev=%d %v\n", hidden, hi, seed, r0.Bound, rep.Bound, rep.Iters, rep.Converged, time.Since(start).Round(time.Millisecond), w, o, len(events), first(events))
			}
		}
	}
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}
