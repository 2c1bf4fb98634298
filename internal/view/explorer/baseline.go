package explorer

import (
	"context"
	"fmt"
	"math"

	"dgpviz/internal/dataset"
	"dgpviz/internal/latent"
	"dgpviz/internal/train"
)

// OneLayerGP is the held-out baseline of a one-layer sparse GP from ds's
// inputs to its outputs, each normalised to mean 0 and variance 1,
// initialised with train.RobotInducing inducing points (seed 1) and fitted
// for iters L-BFGS iterations on one core: its test RMSE in the outputs'
// original units. It depends on ds alone, not on a model. NaN when ds has
// no test split.
func OneLayerGP(ctx context.Context, ds *dataset.Dataset, iters int) (float64, error) {
	if ds.XTest == nil || ds.YTest == nil {
		return math.NaN(), nil
	}
	nx, ny := dataset.FitNormalizer(ds.X), dataset.FitNormalizer(ds.Y)
	m, err := train.Initialize(nx.Apply(ds.X), ny.Apply(ds.Y), train.InitConfig{Inducing: train.RobotInducing, Seed: 1})
	if err != nil {
		return math.NaN(), fmt.Errorf("the one-layer GP baseline: %w", err)
	}
	fm, _, err := train.Fit(ctx, m, train.TrainerConfig{Workers: 1}, train.FitOptions{MaxIters: iters})
	if err != nil {
		return math.NaN(), fmt.Errorf("the one-layer GP baseline: %w", err)
	}
	h := latent.NewHeldOut(ds, nx, ny)
	a, err := latent.Analyze(fm, nil, h, 1)
	if err != nil {
		return math.NaN(), fmt.Errorf("the one-layer GP baseline: %w", err)
	}
	return a.TestRMSE, nil
}
