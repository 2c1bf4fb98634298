package explorer

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"dgpviz/internal/dataset"
	"dgpviz/internal/latent"
	"dgpviz/internal/linalg"
	"dgpviz/internal/train"
)

// GP1Rows is the most training rows the one-layer GP baseline is fitted
// on: beyond, GP1Sample draws that many. A full-batch fit costs time in
// proportion to the rows at every iteration (a million rows: hours for
// the page's 1,500 iterations); 10,000 rows pin its 15 inducing points
// and hyperparameters as well.
const GP1Rows = 10000

// GP1Sample returns the training rows, in order, that OneLayerGP fits on
// among n: every row up to GP1Rows, else GP1Rows of them drawn uniformly
// with seed 1.
func GP1Sample(n int) []int {
	if n <= GP1Rows {
		rows := make([]int, n)
		for i := range rows {
			rows[i] = i
		}
		return rows
	}
	rows := rand.New(rand.NewPCG(1, 0)).Perm(n)[:GP1Rows]
	slices.Sort(rows)
	return rows
}

// OneLayerGP is the held-out baseline of a one-layer sparse GP from ds's
// inputs to its outputs, each normalised to mean 0 and variance 1,
// initialised with train.RobotInducing inducing points (seed 1) and fitted
// for iters L-BFGS iterations on one core to the training rows of
// GP1Sample: its test RMSE in the outputs' original units. It depends on
// ds alone, not on a model. NaN when ds has no test split.
func OneLayerGP(ctx context.Context, ds *dataset.Dataset, iters int) (float64, error) {
	if ds.XTest == nil || ds.YTest == nil {
		return math.NaN(), nil
	}
	x, y := ds.X, ds.Y
	n, _ := x.Dims()
	if rows := GP1Sample(n); len(rows) < n {
		x, y = linalg.Rows(x, rows), linalg.Rows(y, rows)
	}
	nx, ny := dataset.FitNormalizer(x), dataset.FitNormalizer(y)
	m, err := train.Initialize(nx.Apply(x), ny.Apply(y), train.InitConfig{Inducing: train.RobotInducing, Seed: 1})
	if err != nil {
		return math.NaN(), fmt.Errorf("the one-layer GP baseline: %w", err)
	}
	fm, _, err := train.Fit(ctx, m, train.TrainerConfig{Workers: 1}, train.FitOptions{MaxIters: iters})
	if err != nil {
		return math.NaN(), fmt.Errorf("the one-layer GP baseline: %w", err)
	}
	h := latent.NewHeldOut(ds, nx, ny)
	a, err := latent.Analyze(fm, nil, h, latent.AnalyzeOptions{Workers: 1})
	if err != nil {
		return math.NaN(), fmt.Errorf("the one-layer GP baseline: %w", err)
	}
	return a.TestRMSE, nil
}
