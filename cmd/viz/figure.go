package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"dgpviz/internal/dataset"
	"dgpviz/internal/fitfigure"
	"dgpviz/internal/montecarlo"
	"dgpviz/internal/plotkit"
)

func init() {
	register(command{name: "figure", summary: "draw the message, fit, latent or faces figure (svg, png or pdf)", run: runFigure})
}

// modelList collects repeated -model flags.
type modelList []string

func (l *modelList) String() string     { return strings.Join(*l, ",") }
func (l *modelList) Set(s string) error { *l = append(*l, s); return nil }

func runFigure(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fmt.Fprintln(stderr, "usage: viz figure messages|fit|latent|faces [flags]   (viz figure KIND -h for flags)")
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
			return errHelp
		}
		return badInput("viz figure: want a kind: messages, fit, latent or faces")
	}
	switch args[0] {
	case "messages":
		return runFigureMessages(args[1:], stdout, stderr)
	case "fit":
		return runFigureFit(args[1:], stdout, stderr)
	case "latent":
		return runFigureLatent(args[1:], stdout, stderr) // latent_figure.go
	case "faces", "frey": // frey: the name it had when it drew only the Frey faces
		return runFigureFaces(args[1:], stdout, stderr) // faces_figure.go
	}
	return badInput("viz figure: unknown kind %q (want messages, fit, latent or faces)", args[0])
}

// figureFormat returns the format of an output path from its extension,
// unless format is given.
func figureFormat(out, format string) (string, error) {
	if format == "" {
		format = strings.TrimPrefix(strings.ToLower(filepath.Ext(out)), ".")
	}
	for _, f := range plotkit.Formats {
		if f == format {
			return format, nil
		}
	}
	return "", badInput("viz figure: unknown format %q (want svg, png or pdf; from -format or the -o extension)", format)
}

// writeFigure renders into memory and writes out ("-": stdout) only on
// success, so that a failed render leaves no partial file.
func writeFigure(out string, stdout io.Writer, render func(io.Writer) error) error {
	var buf bytes.Buffer
	if err := render(&buf); err != nil {
		return err
	}
	if out == "-" {
		_, err := stdout.Write(buf.Bytes())
		return err
	}
	return os.WriteFile(out, buf.Bytes(), 0o644)
}

func runFigureMessages(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("figure messages", stderr)
	path := fs.String("model", "", "model file (JSON)")
	layer := fs.Int("layer", 1, "layer I (counted from 1) with a 1-D input and output")
	inputs := fs.String("inputs", "", `Gaussian inputs "μ1:s1,μ2:s2,…" (s a variance) in the units of the figure's input axis (-units); default: -preset`)
	units := fs.String("units", "original", "original: the data's units where they apply (layer 1's input, the last layer's output; hidden layers are latent); model: the normalised units the model works in")
	preset := fs.String("preset", montecarlo.InputSetPaper, "teaching preset when -inputs is not given: "+strings.Join(montecarlo.InputSetNames(), ", "))
	samples := fs.Int("samples", 20000, "Monte Carlo samples per input")
	seed := fs.Uint64("seed", 1, "random seed")
	out := fs.String("o", "", "output file (.svg, .png or .pdf; - for stdout)")
	format := fs.String("format", "", "svg, png or pdf (default: from -o)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *path == "" || *out == "" {
		return badInput("viz figure messages: -model FILE and -o FILE are required")
	}
	if *units != "original" && *units != "model" {
		return badInput("viz figure messages: -units %q: want original or model", *units)
	}
	f, err := figureFormat(*out, *format)
	if err != nil {
		return err
	}
	mf, err := readModelFile("viz figure messages", *path)
	if err != nil {
		return err
	}
	m := mf.Model
	if *layer < 1 || *layer > len(m.Layers) {
		return badInput("viz figure messages: -layer %d out of range: the model has layers 1…%d", *layer, len(m.Layers))
	}
	li := *layer - 1
	var ins []montecarlo.GaussianInput
	if *inputs != "" {
		if ins, err = montecarlo.ParseGaussianInputs(*inputs); err != nil {
			return badInput("viz figure messages: -inputs: %v", err)
		}
		if *units == "original" {
			ins = montecarlo.InputsToModel(ins, mf.NormX, li)
		}
	} else {
		ps, err := montecarlo.InputSets(m, li)
		if err != nil {
			return badInput("viz figure messages: %v", err)
		}
		var ok bool
		if ins, ok = ps[*preset]; !ok {
			return badInput("viz figure messages: unknown preset %q (want one of %s)", *preset, strings.Join(montecarlo.InputSetNames(), ", "))
		}
	}
	data, err := montecarlo.MessageFigure(m, li, ins, *samples, *seed)
	if err != nil {
		return badInput("viz figure messages: %v", err)
	}
	if *units == "original" {
		info := dataInfo(mf)
		data.ToOriginal(mf.NormX, mf.NormY, len(m.Layers), info.XUnit, info.YUnit)
	}
	return writeFigure(*out, stdout, func(w io.Writer) error { return montecarlo.RenderMessageFigure(w, f, data) })
}

func runFigureFit(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("figure fit", stderr)
	var paths modelList
	fs.Var(&paths, "model", "model file (JSON); repeat for one panel per model, top to bottom")
	out := fs.String("o", "", "output file (.svg, .png or .pdf; - for stdout)")
	format := fs.String("format", "", "svg, png or pdf (default: from -o)")
	points := fs.Int("points", montecarlo.GPGridPoints, "prediction grid points")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if len(paths) == 0 || *out == "" {
		return badInput("viz figure fit: -model FILE and -o FILE are required")
	}
	f, err := figureFormat(*out, *format)
	if err != nil {
		return err
	}
	var fits []*fitfigure.FitData
	for _, p := range paths {
		mf, err := readModelFile("viz figure fit", p)
		if err != nil {
			return err
		}
		fd, err := fitfigure.FitFigure(mf.Model, mf.NormX, mf.NormY, *points)
		if err != nil {
			return badInput("viz figure fit: %s: %v", p, err)
		}
		info := dataInfo(mf)
		fd.XName, fd.YName = dataset.InputColumns(info.XNames, 1)[0], dataset.LayerColumns(0, 1, 1, info.YNames)[0]
		fd.XUnit, fd.YUnit = info.XUnit, info.YUnit
		fits = append(fits, fd)
	}
	return writeFigure(*out, stdout, func(w io.Writer) error { return fitfigure.RenderFit(w, f, fits) })
}
