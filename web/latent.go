package web

import (
	"bytes"
	"fmt"
	"math"
	"net/url"

	"dgpviz/internal/engine"
	"dgpviz/internal/latent"
	"dgpviz/internal/stream"

	"gonum.org/v1/gonum/mat"
)

// latentExport writes the session's latent coordinates — every layer's
// message at the training inputs — as CSV, or the latent-space figure
// (hidden layers with ≥ 2 dimensions, coloured by the first input, with the
// true path when the data set has one) as svg, png or pdf.
//
//	GET /figure/latent.{csv,svg,png,pdf}?session=KEY
func latentExport(buf *bytes.Buffer, format string, fs *stream.FigureSession, q url.Values) error {
	for _, k := range []string{"layer", "inputs", "preset", "samples", "units"} {
		if q.Has(k) {
			return bad("parameter %q does not apply to the latent export", k)
		}
	}
	if fs.Data == nil {
		return bad("the session has no data set yet")
	}
	m := fs.Model
	var ev engine.Evaluator
	msgs, err := ev.Predict(m, m.X)
	if err != nil {
		return fmt.Errorf("web: latent: %w", err)
	}
	n, _ := m.X.Dims()
	if format == "csv" {
		return latentCSV(buf, fs, &ev)
	}
	f := &latent.Figure{Times: make([]float64, n), TimeLabel: fs.Data.InputNames[0]}
	for i := range f.Times {
		f.Times[i] = fs.Data.X.At(i, 0)
	}
	if p := fs.Data.Positions; p != nil {
		f.Positions = mat.DenseCopyOf(p.Slice(0, n, 0, 2))
	}
	if xt := fs.Data.XTest; xt != nil { // one time scale with the page: up to the last held-out scan
		nt, _ := xt.Dims()
		f.TimeRange = [2]float64{min(f.Times[0], xt.At(0, 0)), max(f.Times[n-1], xt.At(nt-1, 0))}
	}
	for i, msg := range msgs[:len(msgs)-1] {
		if _, q := msg.Mean.Dims(); q < 2 {
			continue
		}
		f.Layers = append(f.Layers, latent.Layer{Name: fmt.Sprintf("h%d", i+1), Mean: msg.Mean, Var: msg.Var})
		score := math.NaN()
		if f.Positions != nil {
			if s, err := latent.LoopClosure(msg.Mean, f.Positions, latent.DefaultMinLag, latent.DefaultRadius); err == nil {
				score = s.Value
			}
		}
		f.Scores = append(f.Scores, score)
	}
	if len(f.Layers) == 0 {
		return bad("the model has no hidden layer with 2 or more dimensions to draw")
	}
	return latent.RenderFigure(buf, format, f)
}

// latentCSV writes every layer's messages at the training inputs and, when
// the data set has them, at the held-out ones, with the inputs in original
// units, a train/test column and the true positions when known: the page's
// "Export latent CSV" and /figure/latent.csv are this one table.
func latentCSV(buf *bytes.Buffer, fs *stream.FigureSession, ev *engine.Evaluator) error {
	ds, m := fs.Data, fs.Model
	inputs := ds.X
	n, _ := ds.X.Dims()
	split := make([]string, n)
	for i := range split {
		split[i] = "train"
	}
	if ds.XTest != nil {
		nt, q := ds.XTest.Dims()
		all := mat.NewDense(n+nt, q, nil)
		all.Slice(0, n, 0, q).(*mat.Dense).Copy(ds.X)
		all.Slice(n, n+nt, 0, q).(*mat.Dense).Copy(ds.XTest)
		inputs = all
		for range nt {
			split = append(split, "test")
		}
	}
	msgs, err := ev.Predict(m, fs.NormX.Apply(inputs))
	if err != nil {
		return fmt.Errorf("web: latent: %w", err)
	}
	t := latent.Table{InputNames: ds.InputNames, Inputs: inputs, Split: split}
	if p := ds.Positions; p != nil {
		if r, _ := p.Dims(); r == len(split) {
			t.Positions = p
		}
	}
	for i, msg := range msgs {
		t.Layers = append(t.Layers, latent.Layer{Name: fmt.Sprintf("layer%d", i+1), Mean: msg.Mean, Var: msg.Var})
	}
	return latent.WriteCSV(buf, t)
}
