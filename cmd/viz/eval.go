package main

import (
	"context"
	"encoding/json"
	"flag"
	"io"

	"dgpviz/internal/engine"
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
	KL                  float64   `json:"kl"`
	Compression         float64   `json:"compression"`
	Propagation         float64   `json:"propagation"`
	CompressionPerDatum []float64 `json:"compression_per_datum"`
	PropagationPerDatum []float64 `json:"propagation_per_datum"`
}

type messageJSON struct {
	Mean [][]float64 `json:"mean"`
	Var  [][]float64 `json:"var"`
}

type evalJSON struct {
	Bound      float64             `json:"bound"`
	Likelihood float64             `json:"likelihood"`
	Layers     []evalLayerJSON     `json:"layers"`
	Messages   []messageJSON       `json:"messages"`
	Gradient   engine.GradientJSON `json:"gradient"`
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
	mf, err := engine.ReadModelFile(*path)
	if err != nil {
		return usageError{err}
	}
	ev := engine.Evaluator{Workers: *workers}
	res, grad, err := ev.Evaluate(mf.Model, engine.Options{Gradient: true, OutputVariance: true})
	if err != nil {
		return usageError{err}
	}
	out := evalJSON{Bound: res.Bound, Likelihood: res.Likelihood, Gradient: grad.JSON(mf.Model)}
	for i, t := range res.Layers {
		out.Layers = append(out.Layers, evalLayerJSON{t.KL, t.Compression, t.Propagation, t.CompressionPerDatum, t.PropagationPerDatum})
		out.Messages = append(out.Messages, messageJSON{Mean: engine.MatrixRows(res.Messages[i].Mean), Var: engine.MatrixRows(res.Messages[i].Var)})
	}
	return json.NewEncoder(stdout).Encode(out)
}
