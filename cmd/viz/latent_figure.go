package main

import (
	"errors"
	"io"

	"dgpviz/internal/latent"
)

// runFigureLatent draws the latent-space figure of a model of data with
// several outputs, as the page's download does (latent.ModelFigure): every
// hidden layer of 2 or more dimensions, its means coloured by the input,
// with the ground truth's path and each layer's geometry score when the
// data carry ground truth.
func runFigureLatent(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("figure latent", stderr)
	path := fs.String("model", "", "model file (viz fit -out, or the page's Save model)")
	spec := fs.String("data", "", "the model's data set, for its ground truth and time scale (default: the one the file records, e.g. robot)")
	out := fs.String("o", "", "output file (.svg, .png or .pdf; - for stdout)")
	format := fs.String("format", "", "svg, png or pdf (default: from -o)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *path == "" || *out == "" {
		return badInput("viz figure latent: -model FILE and -o FILE are required")
	}
	f, err := figureFormat(*out, *format)
	if err != nil {
		return err
	}
	mf, err := readModelFile("viz figure latent", *path)
	if err != nil {
		return err
	}
	ds, _, err := modelDataset("viz figure latent", *path, mf, *spec)
	if err != nil {
		return err
	}
	fig, err := latent.ModelFigure(mf.Model, ds)
	if errors.Is(err, latent.ErrNoLatent) {
		return badInput("viz figure latent: %s: %v", *path, err)
	}
	if err != nil {
		return badInput("viz figure latent: %v", err)
	}
	return writeFigure(*out, stdout, func(w io.Writer) error { return latent.RenderFigure(w, f, fig) })
}
