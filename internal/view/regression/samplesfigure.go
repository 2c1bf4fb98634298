package regression

import (
	"bytes"
	"net/url"
	"strconv"

	"dgpviz/internal/fitfigure"
	"dgpviz/internal/montecarlo"
	"dgpviz/internal/slides"
	"dgpviz/internal/view"
	"dgpviz/internal/wire"
)

//	GET /figure/samples.{svg,png,pdf}?session=KEY[&samples=N]
//
// The samples view as a slide, the paper's step figure: the predictive
// density by sampling through every layer over the data's range and as
// much again on either side, sample paths and the inputs with two or more
// modes (regression's density and paths, seed 1), with the Gaussian final
// message and the data, in the data's original units.

// samplesDefault is the download's samples per input: the page's when the
// model has stopped (a slice's humps are not noise).
const samplesDefault = 2000

func samplesFigure(buf *bytes.Buffer, format string, fs *view.Download, q url.Values) error {
	if err := view.OnlyParams(q, "samples figure", "samples"); err != nil {
		return err
	}
	n := samplesDefault
	if v := q.Get("samples"); q.Has("samples") {
		k, err := strconv.Atoi(v)
		if err != nil || k < DensityMinSamples || k > DensityMaxSamples {
			return view.Bad("samples %q out of range %d…%d", wire.Truncate(v, 20), DensityMinSamples, DensityMaxSamples)
		}
		n = k
	}
	m := fs.Model
	if _, qx := m.X.Dims(); qx != 1 {
		return view.Bad("the samples figure needs data with one input; these have %d", qx)
	}
	if _, d := m.Y.Dims(); d != 1 {
		return view.Bad("the samples figure needs data with one output; these have %d", d)
	}
	x := m.X.RawMatrix().Data
	xs, px := DensityInputs(x, DensityGrid), DensityInputs(x, DensityPathGrid)
	p, err := montecarlo.Predictive(m, xs, 0, n, DensityBins, 1)
	if err != nil {
		return err
	}
	paths, err := montecarlo.Paths(m, px, 0, DensityPaths, 1)
	if err != nil {
		return err
	}
	fd, err := fitfigure.FitFigure(m, fs.NormX, fs.NormY, 0)
	if err != nil {
		return view.Bad("%v", err)
	}
	// Original units: x and y by their normalisations, the density per
	// unit of the original output.
	ox := func(v float64) float64 { return v*fs.NormX.Scale[0] + fs.NormX.Mean[0] }
	oy := func(v float64) float64 { return v*fs.NormY.Scale[0] + fs.NormY.Mean[0] }
	s := &slides.SamplesData{X: make([]float64, len(xs)), Edges: make([]float64, len(p.Edges)), Density: make([]float64, len(p.Density)), Modes: p.Modes, PathX: make([]float64, len(px)), Samples: n, Fit: fd}
	for i, v := range xs {
		s.X[i] = ox(v)
	}
	for i, v := range p.Edges {
		s.Edges[i] = oy(v)
	}
	for i, v := range p.Density {
		s.Density[i] = v / fs.NormY.Scale[0]
	}
	for i, v := range px {
		s.PathX[i] = ox(v)
	}
	for _, path := range paths {
		o := make([]float64, len(path))
		for i, v := range path {
			o[i] = oy(v)
		}
		s.Paths = append(s.Paths, o)
	}
	return slides.Samples(buf, format, s, fs.AxisName(true), fs.AxisName(false), fs.Caption(""))
}
