package main

import (
	"context"
	"encoding/json"
	"flag"
	"io"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
	"dgpviz/internal/modelfile"
)

func init() {
	register(command{name: "eval", summary: "evaluate a model file's bound, messages and gradient (JSON on stdout)", run: runEval})
}

// newFlags returns a flag set that reports errors instead of exiting.
func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("viz "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return errHelp
		}
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return badInput("%s: unexpected arguments %q", fs.Name(), fs.Args())
	}
	return nil
}

type evalLayerJSON struct {
	Layer               int       `json:"layer"`
	KL                  float64   `json:"kl"`
	Compression         float64   `json:"compression"`
	Propagation         float64   `json:"propagation"`
	CompressionPerDatum []float64 `json:"compression_per_datum"`
	PropagationPerDatum []float64 `json:"propagation_per_datum"`
}

// messageJSON is a layer's message (counted from 1), in the units it
// names: the data's original units for the last layer, latent for hidden
// layers.
type messageJSON struct {
	Layer int              `json:"layer"`
	Units messageUnitsJSON `json:"units"`
	// Columns name the columns of Mean and Var (dataset.LayerColumns):
	// the data's outputs for the last layer ("y_ap1"), layer and
	// dimension for a hidden one ("layer1_dim2").
	Columns []string    `json:"columns"`
	Mean    [][]float64 `json:"mean"`
	Var     [][]float64 `json:"var"`
}

type messageUnitsJSON struct {
	Mean string `json:"mean"`
	Var  string `json:"var"`
}

// newMessageJSON is layer i's (from 0) message of a model with the given
// number of layers, its means and variances in the units named.
func newMessageJSON(i, layers int, msg engine.Message, info modelfile.DataInfo) messageJSON {
	u := layerUnit(i, layers, info)
	_, d := msg.Mean.Dims()
	return messageJSON{Layer: i + 1, Units: messageUnitsJSON{u, squared(u)}, Columns: dataset.LayerColumns(i, layers, d, info.YNames),
		Mean: modelfile.MatrixRows(msg.Mean), Var: modelfile.MatrixRows(msg.Var)}
}

// evalJSON is viz eval's output. The bound and its terms are log
// densities of the data as the file holds them (normalised), in nats; the
// messages are in the units they name.
type evalJSON struct {
	Units      evalUnitsJSON          `json:"units"`
	Bound      float64                `json:"bound"`
	Likelihood float64                `json:"likelihood"`
	Layers     []evalLayerJSON        `json:"layers"`
	Messages   []messageJSON          `json:"messages"`
	Gradient   modelfile.GradientJSON `json:"gradient"`
}

type evalUnitsJSON struct {
	Bound    string `json:"bound"`
	Terms    string `json:"terms"`
	Gradient string `json:"gradient"`
}

func runEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("eval", stderr)
	path := fs.String("model", "", "model file (JSON) to evaluate")
	workers := fs.Int("workers", 0, "goroutines over data chunks (0: one per CPU)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *path == "" {
		return badInput("viz eval: -model FILE is required")
	}
	mf, err := readModelFile("viz eval", *path)
	if err != nil {
		return err
	}
	ev := engine.Evaluator{Workers: *workers}
	res, grad, err := ev.EvaluateAll(mf.Model, engine.Options{Gradient: true, OutputVariance: true})
	if err != nil {
		return badInput("viz eval: %s: %v", *path, err)
	}
	info := dataInfo(mf)
	out := evalJSON{Units: evalUnitsJSON{
		Bound:    natsUnit + ", of the data as the file holds them (normalised)",
		Terms:    natsUnit,
		Gradient: "nats per unit of each parameter as the file holds it",
	}, Bound: res.Bound, Likelihood: res.Likelihood, Gradient: modelfile.GradientOf(grad, mf.Model)}
	layers := len(res.Layers)
	for i, t := range res.Layers {
		out.Layers = append(out.Layers, evalLayerJSON{i + 1, t.KL, t.Compression, t.Propagation, t.CompressionPerDatum, t.PropagationPerDatum})
		msg := res.Messages[i]
		if i == layers-1 { // the data's original units
			msg = engine.Message{Mean: mf.NormY.UndoMean(msg.Mean), Var: mf.NormY.UndoVar(msg.Var)}
		}
		out.Messages = append(out.Messages, newMessageJSON(i, layers, msg, info))
	}
	return json.NewEncoder(stdout).Encode(out)
}
