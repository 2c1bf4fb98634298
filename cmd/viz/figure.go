package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"dgpviz/internal/engine"
	"dgpviz/internal/fitfigure"
	"dgpviz/internal/montecarlo"
	"dgpviz/internal/plotkit"
)

func init() {
	register(command{name: "figure", summary: "draw the message figure or the fit figure (svg, png or pdf)", run: runFigure})
}

// modelList collects repeated -model flags.
type modelList []string

func (l *modelList) String() string     { return strings.Join(*l, ",") }
func (l *modelList) Set(s string) error { *l = append(*l, s); return nil }

func runFigure(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fmt.Fprintln(stderr, "usage: viz figure messages|fit|frey [flags]   (viz figure KIND -h for flags)")
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
			return errHelp
		}
		return badInput("viz figure: want a kind: messages, fit or frey")
	}
	switch args[0] {
	case "messages":
		return runFigureMessages(args[1:], stdout, stderr)
	case "fit":
		return runFigureFit(args[1:], stdout, stderr)
	case "frey":
		return runFigureFrey(args[1:], stdout, stderr) // frey_figure.go
	}
	return badInput("viz figure: unknown kind %q (want messages, fit or frey)", args[0])
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
	layer := fs.Int("layer", 1, "layer I (1-based) with a 1-D input and output")
	inputs := fs.String("inputs", "", `Gaussian inputs "μ1:s1,μ2:s2,…" (s a variance); default: -preset`)
	preset := fs.String("preset", montecarlo.PresetPaper, "teaching preset when -inputs is not given: "+strings.Join(montecarlo.PresetNames(), ", "))
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
	f, err := figureFormat(*out, *format)
	if err != nil {
		return err
	}
	mf, err := engine.ReadModelFile(*path)
	if err != nil {
		return usageError{err}
	}
	var ins []montecarlo.GaussianInput
	if *inputs != "" {
		if ins, err = montecarlo.ParseGaussianInputs(*inputs); err != nil {
			return badInput("viz figure messages: -inputs: %v", err)
		}
	} else {
		ps, err := montecarlo.Presets(mf.Model, *layer-1)
		if err != nil {
			return usageError{err}
		}
		var ok bool
		if ins, ok = ps[*preset]; !ok {
			return badInput("viz figure messages: unknown preset %q (want one of %s)", *preset, strings.Join(montecarlo.PresetNames(), ", "))
		}
	}
	data, err := montecarlo.MessageFigure(mf.Model, *layer-1, ins, *samples, *seed)
	if err != nil {
		return usageError{err}
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
		mf, err := engine.ReadModelFile(p)
		if err != nil {
			return usageError{err}
		}
		fd, err := fitfigure.FitFigure(mf.Model, mf.NormX, mf.NormY, *points)
		if err != nil {
			return usageError{fmt.Errorf("%s: %w", p, err)}
		}
		fits = append(fits, fd)
	}
	return writeFigure(*out, stdout, func(w io.Writer) error { return fitfigure.RenderFit(w, f, fits) })
}
