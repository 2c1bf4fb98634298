package main

import (
	"fmt"
	"io"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
	"dgpviz/internal/faces"
)

// runFigureFrey draws the paper's Frey faces figure from a fitted
// autoencoder (viz fit -data frey:PATH -hidden 2): the training frames'
// latent means coloured by frame index, with decoded faces on a grid.
func runFigureFrey(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("figure frey", stderr)
	path := fs.String("model", "", "model file of a Frey faces autoencoder (560 → 2 → 560)")
	grid := fs.Int("grid", 6, "decoded faces on a grid × grid of latent positions (0: none)")
	out := fs.String("o", "", "output file (.svg, .png or .pdf; - for stdout)")
	format := fs.String("format", "", "svg, png or pdf (default: from -o)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *path == "" || *out == "" {
		return badInput("viz figure frey: -model FILE and -o FILE are required")
	}
	if *grid < 0 || *grid > 20 {
		return badInput("viz figure frey: -grid %d: want 0…20", *grid)
	}
	f, err := figureFormat(*out, *format)
	if err != nil {
		return err
	}
	mf, err := engine.ReadModelFile(*path)
	if err != nil {
		return usageError{err}
	}
	m := mf.Model
	_, q := m.X.Dims()
	if len(m.Layers) != 2 || q != dataset.FreyPixels {
		return usageError{fmt.Errorf("viz figure frey: %s is not a Frey faces autoencoder (want 560 → 2 → 560)", *path)}
	}
	if _, lq, d := m.Layers[1].Dims(); lq != 2 || d != dataset.FreyPixels {
		return usageError{fmt.Errorf("viz figure frey: %s is not a Frey faces autoencoder (want 560 → 2 → 560)", *path)}
	}
	var ev engine.Evaluator
	msgs, err := ev.PredictLayers(m, m.X, 1)
	if err != nil {
		return usageError{fmt.Errorf("viz figure frey: %w", err)}
	}
	dec, err := faces.NewDecoder(m, mf.NormY)
	if err != nil {
		return usageError{fmt.Errorf("viz figure frey: %w", err)}
	}
	fig, err := faces.NewFigure(msgs[0].Mean, dec, *grid, [2]int{dataset.FreyHeight, dataset.FreyWidth}, [2]float64{0, 255})
	if err != nil {
		return fmt.Errorf("viz figure frey: %w", err)
	}
	return writeFigure(*out, stdout, func(w io.Writer) error { return faces.Render(w, f, fig) })
}
