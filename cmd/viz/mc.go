package main

import (
	"context"
	"encoding/json"
	"io"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
	"dgpviz/internal/modelfile"
	"dgpviz/internal/montecarlo"

	"gonum.org/v1/gonum/mat"
)

func init() {
	register(command{name: "mc", summary: "Monte Carlo moments of a layer's true response, or of whole chains (JSON on stdout)", run: runMC})
}

// mcMomentsJSON is one layer's (counted from 1) Monte Carlo moments, N × D
// each, in the units it names: the data's original units for the last
// layer, latent for hidden layers.
type mcMomentsJSON struct {
	Layer int         `json:"layer"`
	Units mcUnitsJSON `json:"units"`
	// Columns name the columns of each moment (dataset.LayerColumns).
	Columns []string    `json:"columns"`
	Mean    [][]float64 `json:"mean"`
	Var     [][]float64 `json:"var"`
	MeanSE  [][]float64 `json:"mean_se"`
	VarSE   [][]float64 `json:"var_se"`
}

type mcUnitsJSON struct {
	Mean   string `json:"mean"`
	Var    string `json:"var"`
	MeanSE string `json:"mean_se"`
	VarSE  string `json:"var_se"`
}

// mcJSON is layer i's (from 0) moments of mf's model; the last layer's go
// back to the data's original units.
func mcJSON(i int, m *montecarlo.Moments, mf *modelfile.File, info modelfile.DataInfo) mcMomentsJSON {
	layers := len(mf.Model.Layers)
	mean, vr, meanSE, varSE := m.Mean, m.Var, m.MeanSE, m.VarSE
	if i == layers-1 {
		ny := mf.NormY
		zero := dataset.Normalizer{Mean: make([]float64, len(ny.Mean)), Scale: ny.Scale}
		mean, vr, meanSE, varSE = ny.UndoMean(mean), ny.UndoVar(vr), zero.UndoMean(meanSE), ny.UndoVar(varSE)
	}
	u := layerUnit(i, layers, info)
	_, d := mean.Dims()
	return mcMomentsJSON{Layer: i + 1, Units: mcUnitsJSON{u, squared(u), u, squared(u)}, Columns: dataset.LayerColumns(i, layers, d, info.YNames),
		Mean: modelfile.MatrixRows(mean), Var: modelfile.MatrixRows(vr), MeanSE: modelfile.MatrixRows(meanSE), VarSE: modelfile.MatrixRows(varSE)}
}

func runMC(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("mc", stderr)
	path := fs.String("model", "", "model file (JSON)")
	layer := fs.Int("layer", 1, "layer I (1-based) whose true response to the exact message of layer I−1 (X for layer 1) is sampled")
	samples := fs.Int("samples", 10000, "samples per datum")
	seed := fs.Uint64("seed", 1, "random seed")
	chain := fs.Bool("chain", false, "sample whole chains through all layers from X and print every layer's moments")
	workers := fs.Int("workers", 0, "goroutines (0: one per CPU)")
	noCond := fs.Bool("no-conditional", false, "leave out the conditional variance of f given u")
	noQ := fs.Bool("no-qspread", false, "use u = mean of q(u) instead of sampling q(u)")
	noNoise := fs.Bool("no-noise", false, "leave out the layers' noise")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *path == "" {
		return badInput("viz mc: -model FILE is required")
	}
	mf, err := readModelFile("viz mc", *path)
	if err != nil {
		return err
	}
	m, info := mf.Model, dataInfo(mf)
	opt := montecarlo.Options{Samples: *samples, Seed: *seed, Workers: *workers, NoConditional: *noCond, NoQSpread: *noQ, NoNoise: *noNoise}
	if *chain {
		mos, err := montecarlo.ChainMoments(m, m.X, opt)
		if err != nil {
			return badInput("viz mc: %v", err)
		}
		out := struct {
			Layers []mcMomentsJSON `json:"layers"`
		}{}
		for i := range mos {
			out.Layers = append(out.Layers, mcJSON(i, &mos[i], mf, info))
		}
		return json.NewEncoder(stdout).Encode(out)
	}
	if *layer < 1 || *layer > len(m.Layers) {
		return badInput("viz mc: -layer %d out of range: the model has layers 1…%d", *layer, len(m.Layers))
	}
	i := *layer - 1
	l, err := montecarlo.NewLayer(m.Layers[i], m.Jitter)
	if err != nil {
		return badInput("viz mc: layer %d: %v", *layer, err)
	}
	mu, s := m.X, (*mat.Dense)(nil)
	if i > 0 {
		var ev engine.Evaluator
		msgs, err := ev.Predict(m, m.X)
		if err != nil {
			return badInput("viz mc: %v", err)
		}
		mu, s = msgs[i-1].Mean, msgs[i-1].Var
	}
	mo, err := l.Moments(mu, s, opt)
	if err != nil {
		return badInput("viz mc: %v", err)
	}
	return json.NewEncoder(stdout).Encode(mcJSON(i, mo, mf, info))
}
